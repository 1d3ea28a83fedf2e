/* Private to src/models/gguf*.c: the parsed file's tables. */
#ifndef WGML_GGUF_INTERNAL_H
#define WGML_GGUF_INTERNAL_H

#include "wgml_llm.h"

typedef struct gguf_kv {
    uint64_t key;       /* offset of the NUL-terminated key in names[] */
    uint64_t key_len;
    uint32_t type, elem_type;
    uint64_t n;         /* array element count (1 for scalars)          */
    uint64_t off;       /* file offset of the value / first element      */
    uint64_t *str_offs; /* string arrays: file offset of each element    */
} gguf_kv;

typedef struct gguf_tinfo {
    uint64_t name, name_len;
    uint32_t type;
    int ndim;
    int64_t ne[WGML_MAX_DIMS]; /* GGUF order: ne[0] innermost */
    uint64_t abs, nbytes;
} gguf_tinfo;

struct wgml_gguf {
    const uint8_t *base;
    uint64_t size;
    void *map;          /* non-NULL when we own an mmap of map_len bytes */
    size_t map_len;
    uint32_t version, alignment;
    uint64_t data_off;
    int64_t n_kv, n_t;
    gguf_kv *kvs;
    gguf_tinfo *ts;
    char *names;        /* arena of keys and tensor names               */
    uint64_t names_len, names_cap;
    int64_t *kv_hash, *t_hash; /* open addressing: index + 1, 0 empty   */
    uint64_t kv_hcap, t_hcap;
};

#define N_VALUE_TYPES 13u
extern const char *const gguf_value_type_names[N_VALUE_TYPES];
extern const uint8_t gguf_value_type_size[N_VALUE_TYPES]; /* 0 for string/array */

/* Little-endian unsigned integer of n <= 8 bytes. */
uint64_t gguf_le(const uint8_t *p, unsigned n);
/* Index of key (tensors = 0) or tensor name (tensors = 1) s[0..n), or -1;
 * *slot (if given) receives the empty slot where it would go. */
int64_t gguf_hash_find(const wgml_gguf *g, const int64_t *tab, uint64_t cap, int tensors, const char *s, uint64_t n,
                       uint64_t *slot);

#endif
