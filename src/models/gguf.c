/* GGUF reader: parses and validates a GGUF file's header, metadata and
 * tensor table without touching tensor data.  GPU-free on purpose (the
 * upload lives in gguf_upload.c) so the fuzz target and the ASan replay
 * test link this file with src/error.c alone.
 *
 * Layout (all little-endian): magic "GGUF", u32 version, u64 tensor_count,
 * u64 kv_count; kv_count x {string key, u32 type, value}; tensor_count x
 * {string name, u32 n_dims, u64 ne[n_dims], u32 type, u64 offset}; padding
 * to general.alignment; tensor data.  A string is u64 length + bytes; an
 * array is u32 element type + u64 count + elements. */
#include "gguf_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------- type tables */

static const struct ggml_type_desc {
    const char *name;
    uint32_t blck, tsize;
    wgml_dtype dtype;
} ggml_types[] = {
    /* ids and block sizes from gguf-py's GGMLQuantizationType / GGML_QUANT_SIZES (0.19.0) */
    [0] = {"f32", 1, 4, WGML_F32},        [1] = {"f16", 1, 2, WGML_F16},
    [2] = {"q4_0", 32, 18, WGML_Q4_0},    [3] = {"q4_1", 32, 20, WGML_Q4_1},
    [6] = {"q5_0", 32, 22, WGML_Q5_0},    [7] = {"q5_1", 32, 24, WGML_Q5_1},
    [8] = {"q8_0", 32, 34, WGML_Q8_0},    [9] = {"q8_1", 32, 40, WGML_DTYPE_COUNT},
    [10] = {"q2_K", 256, 84, WGML_Q2_K},  [11] = {"q3_K", 256, 110, WGML_Q3_K},
    [12] = {"q4_K", 256, 144, WGML_Q4_K}, [13] = {"q5_K", 256, 176, WGML_Q5_K},
    [14] = {"q6_K", 256, 210, WGML_Q6_K}, [15] = {"q8_K", 256, 292, WGML_Q8_K},
    [16] = {"iq2_xxs", 256, 66, WGML_DTYPE_COUNT}, [17] = {"iq2_xs", 256, 74, WGML_DTYPE_COUNT},
    [18] = {"iq3_xxs", 256, 98, WGML_DTYPE_COUNT}, [19] = {"iq1_s", 256, 50, WGML_DTYPE_COUNT},
    [20] = {"iq4_nl", 32, 18, WGML_IQ4_NL},        [21] = {"iq3_s", 256, 110, WGML_DTYPE_COUNT},
    [22] = {"iq2_s", 256, 82, WGML_DTYPE_COUNT},   [23] = {"iq4_xs", 256, 136, WGML_DTYPE_COUNT},
    [24] = {"i8", 1, 1, WGML_I8},                  [25] = {"i16", 1, 2, WGML_DTYPE_COUNT},
    [26] = {"i32", 1, 4, WGML_I32},                [27] = {"i64", 1, 8, WGML_DTYPE_COUNT},
    [28] = {"f64", 1, 8, WGML_DTYPE_COUNT},        [29] = {"iq1_m", 256, 56, WGML_DTYPE_COUNT},
    [30] = {"bf16", 1, 2, WGML_BF16},              [34] = {"tq1_0", 256, 54, WGML_DTYPE_COUNT},
    [35] = {"tq2_0", 256, 66, WGML_DTYPE_COUNT},   [39] = {"mxfp4", 32, 17, WGML_MXFP4},
    [40] = {"nvfp4", 64, 36, WGML_DTYPE_COUNT},    [41] = {"q1_0", 128, 18, WGML_DTYPE_COUNT},
};
#define N_GGML_TYPES (sizeof ggml_types / sizeof *ggml_types)

static const struct ggml_type_desc *ggml_type(uint32_t t)
{
    return t < N_GGML_TYPES && ggml_types[t].name ? &ggml_types[t] : NULL;
}

wgml_dtype wgml_gguf_dtype_from_ggml(uint32_t t)
{
    const struct ggml_type_desc *d = ggml_type(t);
    return d ? d->dtype : WGML_DTYPE_COUNT;
}

const char *wgml_gguf_ggml_type_name(uint32_t t)
{
    const struct ggml_type_desc *d = ggml_type(t);
    return d ? d->name : "?";
}

const char *const gguf_value_type_names[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32",
                                               "bool", "string", "array", "u64", "i64", "f64"};
const uint8_t gguf_value_type_size[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

const char *wgml_gguf_type_name(wgml_gguf_type t)
{
    return (unsigned)t < N_VALUE_TYPES ? gguf_value_type_names[t] : "?";
}

/* ------------------------------------------------------------ cursor */

typedef struct cursor {
    const uint8_t *p;
    uint64_t size, pos;
    /* what is being read, for messages: "key 'x'", "tensor 'y'" ... */
    const char *ctx;
    const char *ctx_name;
    uint64_t ctx_name_len;
    int64_t ctx_idx; /* index inside the context, -1 if none */
} cursor;

static void describe(const cursor *c, const char *field, char *buf, size_t cap)
{
    int n = 0;
    if (c->ctx && c->ctx_name)
        n = snprintf(buf, cap, "%s '%.*s': ", c->ctx, (int)(c->ctx_name_len > 64 ? 64 : c->ctx_name_len),
                     c->ctx_name);
    else if (c->ctx)
        n = snprintf(buf, cap, "%s: ", c->ctx);
    if (n < 0 || (size_t)n >= cap)
        n = 0;
    if (c->ctx_idx >= 0)
        snprintf(buf + n, cap - (size_t)n, "%s %" PRId64, field, c->ctx_idx);
    else
        snprintf(buf + n, cap - (size_t)n, "%s", field);
}

static wgml_status truncated(const cursor *c, const char *field, uint64_t need)
{
    char what[200];
    describe(c, field, what, sizeof what);
    return wgml_error(WGML_ERR_IO,
                      "gguf: truncated file: %s at offset %" PRIu64 " needs %" PRIu64 " bytes, %" PRIu64 " left",
                      what, c->pos, need, c->size - c->pos);
}

/* A count (at offset `at`) that the bytes after the current position
 * cannot hold, at `min` bytes an item. */
static wgml_status count_truncated(const cursor *c, const char *field, uint64_t at, uint64_t count, uint64_t min)
{
    return wgml_error(WGML_ERR_IO,
                      "gguf: truncated file: %s = %" PRIu64 " at offset %" PRIu64 ": that many need at least %" PRIu64
                      " bytes each, only %" PRIu64 " bytes follow offset %" PRIu64,
                      field, count, at, min, c->size - c->pos, c->pos);
}

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static wgml_status corrupt(const cursor *c, uint64_t at, const char *field, const char *fmt, ...);

static wgml_status corrupt(const cursor *c, uint64_t at, const char *field, const char *fmt, ...)
{
    char what[200], why[256];
    describe(c, field, what, sizeof what);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return wgml_error(WGML_ERR_INVALID_ARG, "gguf: corrupt %s at offset %" PRIu64 ": %s", what, at, why);
}

uint64_t gguf_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static wgml_status rd(cursor *c, const char *field, unsigned n, uint64_t *v)
{
    *v = 0; /* defined on failure too (the compiler cannot see the status) */
    if (c->size - c->pos < n)
        return truncated(c, field, n);
    *v = gguf_le(c->p + c->pos, n);
    c->pos += n;
    return WGML_OK;
}

/* A string: u64 length + bytes.  Returns the offset of its bytes. */
static wgml_status rd_str(cursor *c, const char *field, uint64_t *off, uint64_t *len)
{
    uint64_t start = c->pos;
    *off = 0;
    wgml_status st = rd(c, field, 8, len);
    if (st)
        return st;
    if (*len > c->size - c->pos) {
        c->pos = start;
        char f[64];
        snprintf(f, sizeof f, "%s (length %" PRIu64 ")", field, *len);
        return truncated(c, f, 8 + *len);
    }
    *off = c->pos;
    c->pos += *len;
    return WGML_OK;
}

/* ------------------------------------------------------------ hashing */

static uint64_t fnv1a(const char *s, uint64_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (uint64_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    return h;
}

static uint64_t hash_cap(int64_t n)
{
    uint64_t cap = 16;
    while (cap < (uint64_t)n * 2)
        cap <<= 1;
    return cap;
}

/* Looks `s` up; returns the index or -1, and in *slot the probe end. */
int64_t gguf_hash_find(const wgml_gguf *g, const int64_t *tab, uint64_t cap, int tensors, const char *s,
                         uint64_t n, uint64_t *slot)
{
    uint64_t h = fnv1a(s, n) & (cap - 1);
    for (;; h = (h + 1) & (cap - 1)) {
        int64_t e = tab[h];
        if (e == 0) {
            if (slot)
                *slot = h;
            return -1;
        }
        uint64_t off = tensors ? g->ts[e - 1].name : g->kvs[e - 1].key;
        uint64_t len = tensors ? g->ts[e - 1].name_len : g->kvs[e - 1].key_len;
        if (len == n && memcmp(g->names + off, s, n) == 0)
            return e - 1;
    }
}

/* ------------------------------------------------------------ parsing */

static wgml_status add_name(wgml_gguf *g, const uint8_t *s, uint64_t n, uint64_t *off)
{
    if (g->names_len + n + 1 > g->names_cap) {
        uint64_t cap = g->names_cap ? g->names_cap : 4096;
        while (cap < g->names_len + n + 1)
            cap *= 2;
        char *p = realloc(g->names, cap);
        if (!p)
            return wgml_error(WGML_ERR_OOM, "gguf: out of host memory for names (%" PRIu64 " bytes)", cap);
        g->names = p;
        g->names_cap = cap;
    }
    memcpy(g->names + g->names_len, s, n);
    g->names[g->names_len + n] = 0;
    *off = g->names_len;
    g->names_len += n + 1;
    return WGML_OK;
}

static wgml_status parse_value(wgml_gguf *g, cursor *c, gguf_kv *kv)
{
    uint64_t at = c->pos, t = 0;
    wgml_status st = rd(c, "value type", 4, &t);
    if (st)
        return st;
    if (t >= N_VALUE_TYPES)
        return corrupt(c, at, "value type", "type id %" PRIu64 " is not a GGUF type (0..12)", t);
    kv->type = (uint32_t)t;
    kv->n = 1;
    if (t == WGML_GGUF_STRING) {
        uint64_t len;
        kv->off = c->pos;
        return rd_str(c, "string value", &at, &len);
    }
    if (t != WGML_GGUF_ARRAY) {
        kv->off = c->pos;
        if (c->size - c->pos < gguf_value_type_size[t])
            return truncated(c, "value", gguf_value_type_size[t]);
        c->pos += gguf_value_type_size[t];
        return WGML_OK;
    }
    uint64_t et = 0, n = 0;
    at = c->pos;
    if ((st = rd(c, "array element type", 4, &et)))
        return st;
    if (et >= N_VALUE_TYPES)
        return corrupt(c, at, "array element type", "type id %" PRIu64 " is not a GGUF type (0..12)", et);
    if (et == WGML_GGUF_ARRAY)
        return corrupt(c, at, "array element type", "arrays of arrays are not supported");
    if ((st = rd(c, "array length", 8, &n)))
        return st;
    kv->elem_type = (uint32_t)et;
    kv->n = n;
    kv->off = c->pos;
    uint64_t esize = et == WGML_GGUF_STRING ? 8 : gguf_value_type_size[et]; /* a string takes >= 8 bytes */
    if (n > (c->size - c->pos) / esize) {
        char f[64];
        snprintf(f, sizeof f, "array of %" PRIu64 " %s", n, gguf_value_type_names[et]);
        return truncated(c, f, n > UINT64_MAX / esize ? UINT64_MAX : n * esize);
    }
    if (et != WGML_GGUF_STRING) {
        c->pos += n * esize;
        return WGML_OK;
    }
    /* n <= bytes left / 8, so this allocation is bounded by the file size */
    kv->str_offs = malloc((n ? n : 1) * sizeof *kv->str_offs);
    if (!kv->str_offs)
        return wgml_error(WGML_ERR_OOM, "gguf: out of host memory for a %" PRIu64 "-string array", n);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t off, len;
        c->ctx_idx = (int64_t)i;
        kv->str_offs[i] = c->pos;
        if ((st = rd_str(c, "array element", &off, &len)))
            return st;
    }
    c->ctx_idx = -1;
    return WGML_OK;
}

static wgml_status parse_kvs(wgml_gguf *g, cursor *c, uint64_t n_kv)
{
    /* each entry takes >= 13 bytes: key length 8, type 4, a 1-byte value */
    if (n_kv > (c->size - c->pos) / 13)
        return count_truncated(c, "kv_count", 16, n_kv, 13);
    g->kvs = calloc(n_kv ? n_kv : 1, sizeof *g->kvs);
    g->kv_hcap = hash_cap((int64_t)n_kv);
    g->kv_hash = calloc(g->kv_hcap, sizeof *g->kv_hash);
    if (!g->kvs || !g->kv_hash)
        return wgml_error(WGML_ERR_OOM, "gguf: out of host memory for %" PRIu64 " metadata entries", n_kv);
    for (uint64_t i = 0; i < n_kv; i++) {
        gguf_kv *kv = &g->kvs[i];
        uint64_t at = c->pos, off, len;
        c->ctx = "metadata";
        c->ctx_name = NULL;
        c->ctx_idx = (int64_t)i;
        wgml_status st = rd_str(c, "key of entry", &off, &len);
        if (st)
            return st;
        c->ctx_idx = -1;
        c->ctx = "key";
        c->ctx_name = (const char *)c->p + off;
        c->ctx_name_len = len;
        uint64_t slot;
        if (gguf_hash_find(g, g->kv_hash, g->kv_hcap, 0, (const char *)c->p + off, len, &slot) >= 0)
            return corrupt(c, at, "name", "duplicate key");
        if ((st = add_name(g, c->p + off, len, &kv->key)))
            return st;
        kv->key_len = len;
        g->n_kv = (int64_t)i + 1; /* from here on kv is owned (freed on error) */
        g->kv_hash[slot] = (int64_t)i + 1;
        if ((st = parse_value(g, c, kv)))
            return st;
        if (len == 17 && memcmp(c->ctx_name, "general.alignment", 17) == 0) {
            if (kv->type != WGML_GGUF_U32)
                return corrupt(c, kv->off, "value", "general.alignment must be u32, not %s",
                               gguf_value_type_names[kv->type]);
            uint64_t a = gguf_le(c->p + kv->off, 4);
            if (a == 0 || (a & (a - 1)))
                return corrupt(c, kv->off, "value", "alignment %" PRIu64 " is not a power of two", a);
            g->alignment = (uint32_t)a;
        }
    }
    c->ctx = NULL;
    return WGML_OK;
}

static wgml_status parse_tensor(wgml_gguf *g, cursor *c, gguf_tinfo *t, int64_t index)
{
    uint64_t at = c->pos, off, len, v = 0;
    c->ctx = "tensor";
    c->ctx_name = NULL;
    c->ctx_idx = index;
    wgml_status st = rd_str(c, "name of tensor", &off, &len);
    if (st)
        return st;
    c->ctx_name = (const char *)c->p + off;
    c->ctx_name_len = len;
    c->ctx_idx = -1;
    uint64_t slot;
    if (gguf_hash_find(g, g->t_hash, g->t_hcap, 1, c->ctx_name, len, &slot) >= 0)
        return corrupt(c, at, "name", "duplicate tensor name");
    if ((st = add_name(g, c->p + off, len, &t->name)))
        return st;
    t->name_len = len;
    at = c->pos;
    if ((st = rd(c, "n_dims", 4, &v)))
        return st;
    if (v == 0 || v > WGML_MAX_DIMS)
        return corrupt(c, at, "n_dims", "%" PRIu64 " dims: wgml supports 1 to %d", v, WGML_MAX_DIMS);
    t->ndim = (int)v;
    uint64_t nelem = 1;
    for (int d = 0; d < t->ndim; d++) {
        at = c->pos;
        if ((st = rd(c, "dim", 8, &v)))
            return st;
        if (v > (uint64_t)INT64_MAX)
            return corrupt(c, at, "dim", "ne[%d] = %" PRIu64 " is negative as int64", d, v);
        if (v && nelem > (uint64_t)INT64_MAX / v)
            return corrupt(c, at, "dim", "element count overflows int64 at ne[%d] = %" PRIu64, d, v);
        t->ne[d] = (int64_t)v;
        nelem *= v;
    }
    at = c->pos;
    if ((st = rd(c, "type", 4, &v)))
        return st;
    const struct ggml_type_desc *td = v <= UINT32_MAX ? ggml_type((uint32_t)v) : NULL;
    if (!td)
        return corrupt(c, at, "type", "unknown ggml type id %" PRIu64, v);
    t->type = (uint32_t)v;
    if ((uint64_t)t->ne[0] % td->blck)
        return corrupt(c, at, "type", "ne[0] = %" PRId64 " is not a multiple of %s's block of %u", t->ne[0], td->name,
                       td->blck);
    /* bytes = nelem / blck * tsize; nelem <= 2^63 and tsize <= 292 */
    uint64_t blocks = nelem / td->blck;
    if (blocks > UINT64_MAX / td->tsize)
        return corrupt(c, at, "type", "byte size overflows 64 bits");
    t->nbytes = blocks * td->tsize;
    at = c->pos;
    if ((st = rd(c, "data offset", 8, &v)))
        return st;
    if (v % g->alignment)
        return corrupt(c, at, "data offset", "%" PRIu64 " is not a multiple of the alignment %u", v, g->alignment);
    t->abs = v; /* relative until the data section's start is known */
    g->t_hash[slot] = index + 1;
    return WGML_OK;
}

static wgml_status parse_tensors(wgml_gguf *g, cursor *c, uint64_t n_t)
{
    /* each tensor info takes >= 32 bytes: name length 8, n_dims 4, one dim 8, type 4, offset 8 */
    if (n_t > (c->size - c->pos) / 32)
        return count_truncated(c, "tensor_count", 8, n_t, 32);
    g->ts = calloc(n_t ? n_t : 1, sizeof *g->ts);
    g->t_hcap = hash_cap((int64_t)n_t);
    g->t_hash = calloc(g->t_hcap, sizeof *g->t_hash);
    if (!g->ts || !g->t_hash)
        return wgml_error(WGML_ERR_OOM, "gguf: out of host memory for %" PRIu64 " tensors", n_t);
    for (uint64_t i = 0; i < n_t; i++) {
        wgml_status st = parse_tensor(g, c, &g->ts[i], (int64_t)i);
        if (st)
            return st;
        g->n_t = (int64_t)i + 1;
    }
    c->ctx = NULL;
    /* the data section starts at the next multiple of the alignment */
    uint64_t a = g->alignment, pad = (a - c->pos % a) % a;
    if (n_t && pad > c->size - c->pos)
        return truncated(c, "padding before tensor data", pad);
    g->data_off = c->pos + pad;
    for (int64_t i = 0; i < g->n_t; i++) {
        gguf_tinfo *t = &g->ts[i];
        uint64_t rel = t->abs;
        c->ctx = "tensor";
        c->ctx_name = g->names + t->name;
        c->ctx_name_len = t->name_len;
        if (rel > g->size - g->data_off || t->nbytes > g->size - g->data_off - rel) {
            char what[200];
            describe(c, "data", what, sizeof what);
            return wgml_error(WGML_ERR_IO,
                              "gguf: truncated file: %s at offset %" PRIu64 " (data section %" PRIu64 " + %" PRIu64
                              ") needs %" PRIu64 " bytes, the file has %" PRIu64,
                              what, g->data_off + (rel < UINT64_MAX - g->data_off ? rel : 0), g->data_off, rel,
                              t->nbytes, g->size);
        }
        t->abs = g->data_off + rel;
    }
    c->ctx = NULL;
    return WGML_OK;
}

static wgml_status parse(wgml_gguf *g)
{
    cursor c = {.p = g->base, .size = g->size, .ctx_idx = -1};
    uint64_t magic = 0, version = 0, n_t = 0, n_kv = 0;
    wgml_status st = rd(&c, "magic", 4, &magic);
    if (st)
        return st;
    if (magic != 0x46554747u) /* "GGUF" */
        return corrupt(&c, 0, "magic", "not a GGUF file (first bytes %02x %02x %02x %02x, want \"GGUF\")",
                       g->base[0], g->base[1], g->base[2], g->base[3]);
    if ((st = rd(&c, "version", 4, &version)))
        return st;
    if (version != 2 && version != 3)
        return corrupt(&c, 4, "version", "version %" PRIu64 " is not supported (2 and 3 are%s)", version,
                       version == 1 ? "; version 1 files predate 64-bit counts"
                       : (version & 0xffff) == 0 ? "; this looks like a big-endian file"
                                                 : "");
    g->version = (uint32_t)version;
    if ((st = rd(&c, "tensor_count", 8, &n_t)) || (st = rd(&c, "kv_count", 8, &n_kv)))
        return st;
    g->alignment = 32; /* GGUF's default when general.alignment is absent */
    if ((st = parse_kvs(g, &c, n_kv)))
        return st;
    return parse_tensors(g, &c, n_t);
}

static wgml_status finish_open(wgml_gguf *g, wgml_gguf **out)
{
    wgml_status st = parse(g);
    if (st) {
        wgml_gguf_close(g);
        return st;
    }
    *out = g;
    return WGML_OK;
}

wgml_status wgml_gguf_open_memory(const void *data, size_t size, wgml_gguf **out)
{
    if (!out)
        return wgml_error(WGML_ERR_INVALID_ARG, "wgml_gguf_open_memory: out is NULL");
    *out = NULL;
    if (!data && size)
        return wgml_error(WGML_ERR_INVALID_ARG, "wgml_gguf_open_memory: data is NULL");
    wgml_gguf *g = calloc(1, sizeof *g);
    if (!g)
        return wgml_error(WGML_ERR_OOM, "gguf: out of host memory");
    static const uint8_t empty[1];
    g->base = data ? data : empty;
    g->size = size;
    return finish_open(g, out);
}

wgml_status wgml_gguf_open(const char *path, wgml_gguf **out)
{
    if (!out || !path)
        return wgml_error(WGML_ERR_INVALID_ARG, "wgml_gguf_open: %s is NULL", path ? "out" : "path");
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return wgml_error(WGML_ERR_IO, "gguf: cannot open %s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return wgml_error(WGML_ERR_IO, "gguf: %s is not a readable regular file", path);
    }
    if ((uint64_t)sb.st_size > SIZE_MAX) {
        close(fd);
        return wgml_error(WGML_ERR_IO, "gguf: %s is too big to map here", path);
    }
    wgml_gguf *g = calloc(1, sizeof *g);
    if (!g) {
        close(fd);
        return wgml_error(WGML_ERR_OOM, "gguf: out of host memory");
    }
    if (sb.st_size > 0) {
        void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            int e = errno;
            close(fd);
            free(g);
            return wgml_error(WGML_ERR_IO, "gguf: cannot map %s: %s", path, strerror(e));
        }
        g->map = m;
        g->map_len = (size_t)sb.st_size;
        g->base = m;
    } else {
        static const uint8_t empty[1];
        g->base = empty;
    }
    close(fd);
    g->size = (uint64_t)sb.st_size;
    wgml_status st = finish_open(g, out);
    if (st) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", wgml_last_error());
        return wgml_error(st, "%s: %s", path, msg);
    }
    return WGML_OK;
}

void wgml_gguf_close(wgml_gguf *g)
{
    if (!g)
        return;
    for (int64_t i = 0; i < g->n_kv; i++)
        free(g->kvs[i].str_offs);
    free(g->kvs);
    free(g->ts);
    free(g->names);
    free(g->kv_hash);
    free(g->t_hash);
    if (g->map)
        munmap(g->map, g->map_len);
    free(g);
}

