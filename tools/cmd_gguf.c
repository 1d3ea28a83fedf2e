/* `wgml gguf FILE`: a GGUF's header, metadata and tensor table (no GPU). */
#include "cli.h"
#include "wgml_llm.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* A string for one line: control bytes escaped, clipped at max bytes. */
static void print_clipped(const char *s, size_t len, size_t max)
{
    size_t n = len < max ? len : max;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n')
            fputs("\\n", stdout);
        else if (c == '\t')
            fputs("\\t", stdout);
        else if (c < 0x20 || c == 0x7f)
            printf("\\x%02x", c);
        else
            putchar(c);
    }
    if (len > max)
        printf("... (%zu bytes)", len);
}

static void print_array(const wgml_gguf *g, int64_t k, wgml_gguf_type et, uint64_t n)
{
    printf("[%s x %" PRIu64 "]", wgml_gguf_type_name(et), n);
    for (uint64_t i = 0; i < n && i < 4; i++) {
        const char *s;
        size_t len;
        int32_t v;
        float f;
        fputs(i ? ", " : " ", stdout);
        if (et == WGML_GGUF_STRING && wgml_gguf_array_string_at(g, k, i, &s, &len) == WGML_OK) {
            putchar('"');
            print_clipped(s, len, 40);
            putchar('"');
        } else if (wgml_gguf_array_i32_at(g, k, i, &v) == WGML_OK)
            printf("%d", v);
        else if (wgml_gguf_array_f32_at(g, k, i, &f) == WGML_OK)
            printf("%g", (double)f);
        else
            fputs("?", stdout);
    }
    if (n > 4)
        fputs(", ...", stdout);
}

int cmd_gguf(int argc, char **argv)
{
    if (argc != 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: wgml gguf FILE.gguf\n");
        return 2;
    }
    wgml_gguf *g;
    wgml_status st = wgml_gguf_open(argv[1], &g);
    if (st)
        return cli_error("reading the GGUF", st);
    printf("%s: GGUF v%u, %" PRIu64 " bytes, alignment %u, data at %" PRIu64 "\n\n", argv[1], wgml_gguf_version(g),
           wgml_gguf_file_size(g), wgml_gguf_alignment(g), wgml_gguf_data_offset(g));
    printf("metadata (%" PRId64 " keys):\n", wgml_gguf_kv_count(g));
    for (int64_t i = 0; i < wgml_gguf_kv_count(g); i++) {
        wgml_gguf_type t, et;
        uint64_t n;
        wgml_gguf_kv_type(g, i, &t, &et, &n);
        printf("  %-42s %-6s ", wgml_gguf_key(g, i), wgml_gguf_type_name(t));
        if (t == WGML_GGUF_ARRAY)
            print_array(g, i, et, n);
        else if (t == WGML_GGUF_STRING) {
            const char *s;
            size_t len;
            wgml_gguf_get_string(g, wgml_gguf_key(g, i), &s, &len);
            print_clipped(s, len, 80);
        } else {
            char buf[64];
            wgml_gguf_format_value(g, i, buf, sizeof buf);
            fputs(buf, stdout);
        }
        putchar('\n');
    }
    printf("\ntensors (%" PRId64 "):\n  %-40s %-8s %-24s %12s %12s\n", wgml_gguf_tensor_count(g), "name", "dtype",
           "shape", "bytes", "offset");
    uint64_t total = 0;
    for (int64_t i = 0; i < wgml_gguf_tensor_count(g); i++) {
        wgml_gguf_tensor t;
        wgml_gguf_tensor_info(g, i, &t);
        char shape[64] = "[";
        for (int d = 0; d < t.ndim; d++)
            snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%" PRId64, d ? ", " : "", t.shape[d]);
        strcat(shape, "]");
        printf("  %-40s %-8s %-24s %12" PRIu64 " %12" PRIu64 "%s\n", t.name, wgml_gguf_ggml_type_name(t.ggml_type),
               shape, t.nbytes, t.offset, t.dtype == WGML_DTYPE_COUNT ? "  (not supported by wgml)" : "");
        total += t.nbytes;
    }
    printf("  total %" PRIu64 " bytes (%.1f MiB)\n", total, (double)total / (1 << 20));
    wgml_gguf_close(g);
    return 0;
}
