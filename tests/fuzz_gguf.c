/* libFuzzer entry point for the GGUF reader and the tokenizer: every input
 * is opened from memory and everything in it is read (tests/gguf_exercise.h,
 * the body tests/test_gguf.c replays in CI).  Build and run: see README
 * ("Fuzzing the GGUF reader"). */
#include <stddef.h>
#include <stdint.h>

#include "gguf_exercise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gguf_exercise(data, size);
    return 0;
}
