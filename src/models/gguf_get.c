/* GGUF accessors: typed metadata getters and tensor lookups over the
 * tables gguf.c built (every offset here was bounds-checked at open). */
#include "gguf_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>


uint32_t wgml_gguf_version(const wgml_gguf *g) { return g ? g->version : 0; }
uint32_t wgml_gguf_alignment(const wgml_gguf *g) { return g ? g->alignment : 0; }
uint64_t wgml_gguf_data_offset(const wgml_gguf *g) { return g ? g->data_off : 0; }
uint64_t wgml_gguf_file_size(const wgml_gguf *g) { return g ? g->size : 0; }
int64_t wgml_gguf_kv_count(const wgml_gguf *g) { return g ? g->n_kv : 0; }
int64_t wgml_gguf_tensor_count(const wgml_gguf *g) { return g ? g->n_t : 0; }

int64_t wgml_gguf_find_key(const wgml_gguf *g, const char *key)
{
    if (!g || !key)
        return -1;
    return gguf_hash_find(g, g->kv_hash, g->kv_hcap, 0, key, strlen(key), NULL);
}

const char *wgml_gguf_key(const wgml_gguf *g, int64_t i)
{
    return g && i >= 0 && i < g->n_kv ? g->names + g->kvs[i].key : NULL;
}

wgml_status wgml_gguf_kv_type(const wgml_gguf *g, int64_t i, wgml_gguf_type *type, wgml_gguf_type *elem_type,
                              uint64_t *n_elems)
{
    if (!g || i < 0 || i >= g->n_kv)
        return wgml_error(WGML_ERR_INDEX, "gguf: metadata index %" PRId64 " out of range", i);
    const gguf_kv *kv = &g->kvs[i];
    if (type)
        *type = (wgml_gguf_type)kv->type;
    if (elem_type)
        *elem_type = (wgml_gguf_type)(kv->type == WGML_GGUF_ARRAY ? kv->elem_type : kv->type);
    if (n_elems)
        *n_elems = kv->n;
    return WGML_OK;
}

static wgml_status lookup(const wgml_gguf *g, const char *key, const gguf_kv **kv)
{
    int64_t i = wgml_gguf_find_key(g, key);
    if (i < 0)
        return wgml_error(g && key ? WGML_ERR_INDEX : WGML_ERR_INVALID_ARG, "gguf: no metadata key '%s'",
                          key ? key : "(null)");
    *kv = &g->kvs[i];
    return WGML_OK;
}

/* Integer of any width at p as int64/uint64; *neg set when negative. */
static int read_int(uint32_t t, const uint8_t *p, uint64_t *mag, int *neg)
{
    uint64_t v;
    *neg = 0;
    switch (t) {
    case WGML_GGUF_U8: case WGML_GGUF_U16: case WGML_GGUF_U32: case WGML_GGUF_U64:
        *mag = gguf_le(p, gguf_value_type_size[t]);
        return 1;
    case WGML_GGUF_I8: case WGML_GGUF_I16: case WGML_GGUF_I32: case WGML_GGUF_I64: {
        unsigned bits = 8u * gguf_value_type_size[t];
        v = gguf_le(p, gguf_value_type_size[t]);
        if (bits < 64 && (v >> (bits - 1)) & 1)
            v |= ~0ull << bits; /* sign-extend */
        *neg = (int64_t)v < 0;
        *mag = *neg ? 0 - v : v;
        return 1;
    }
    default:
        return 0;
    }
}

static wgml_status get_int(const wgml_gguf *g, const char *key, uint32_t t, const uint8_t *p, int64_t lo,
                           uint64_t hi, int64_t *sv, uint64_t *uv)
{
    uint64_t mag;
    int neg;
    if (!read_int(t, p, &mag, &neg))
        return wgml_error(WGML_ERR_DTYPE, "gguf: '%s' is %s, not an integer", key, gguf_value_type_names[t]);
    if (neg ? mag > (uint64_t)(-(lo + 1)) + 1 : mag > hi)
        return wgml_error(WGML_ERR_DTYPE, "gguf: '%s' = %s%" PRIu64 " does not fit the requested type", key,
                          neg ? "-" : "", mag);
    if (sv)
        *sv = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    if (uv)
        *uv = mag;
    return WGML_OK;
}

static wgml_status scalar(const wgml_gguf *g, const char *key, const gguf_kv **kv, const void *v)
{
    wgml_status st = v ? lookup(g, key, kv) : wgml_error(WGML_ERR_INVALID_ARG, "gguf: NULL output for '%s'", key);
    if (!st && (*kv)->type == WGML_GGUF_ARRAY)
        return wgml_error(WGML_ERR_DTYPE, "gguf: '%s' is an array, not a scalar", key);
    return st;
}

wgml_status wgml_gguf_get_u32(const wgml_gguf *g, const char *key, uint32_t *v)
{
    const gguf_kv *kv = NULL;
    uint64_t u;
    wgml_status st = scalar(g, key, &kv, v);
    if (!st && !(st = get_int(g, key, kv->type, g->base + kv->off, 0, UINT32_MAX, NULL, &u)))
        *v = (uint32_t)u;
    return st;
}

wgml_status wgml_gguf_get_i32(const wgml_gguf *g, const char *key, int32_t *v)
{
    const gguf_kv *kv = NULL;
    int64_t s;
    wgml_status st = scalar(g, key, &kv, v);
    if (!st && !(st = get_int(g, key, kv->type, g->base + kv->off, INT32_MIN, INT32_MAX, &s, NULL)))
        *v = (int32_t)s;
    return st;
}

wgml_status wgml_gguf_get_u64(const wgml_gguf *g, const char *key, uint64_t *v)
{
    const gguf_kv *kv = NULL;
    wgml_status st = scalar(g, key, &kv, v);
    return st ? st : get_int(g, key, kv->type, g->base + kv->off, 0, UINT64_MAX, NULL, v);
}

static int read_float(uint32_t t, const uint8_t *p, float *v)
{
    if (t == WGML_GGUF_F32) {
        uint32_t b = (uint32_t)gguf_le(p, 4);
        memcpy(v, &b, 4);
        return 1;
    }
    if (t == WGML_GGUF_F64) {
        uint64_t b = gguf_le(p, 8);
        double d;
        memcpy(&d, &b, 8);
        *v = (float)d;
        return 1;
    }
    return 0;
}

wgml_status wgml_gguf_get_f32(const wgml_gguf *g, const char *key, float *v)
{
    const gguf_kv *kv = NULL;
    wgml_status st = scalar(g, key, &kv, v);
    if (!st && !read_float(kv->type, g->base + kv->off, v))
        return wgml_error(WGML_ERR_DTYPE, "gguf: '%s' is %s, not f32", key, gguf_value_type_names[kv->type]);
    return st;
}

wgml_status wgml_gguf_get_bool(const wgml_gguf *g, const char *key, bool *v)
{
    const gguf_kv *kv = NULL;
    wgml_status st = scalar(g, key, &kv, v);
    if (!st && kv->type != WGML_GGUF_BOOL)
        return wgml_error(WGML_ERR_DTYPE, "gguf: '%s' is %s, not bool", key, gguf_value_type_names[kv->type]);
    if (!st)
        *v = g->base[kv->off] != 0;
    return st;
}

/* The string whose u64 length prefix is at off (checked at open). */
static void string_at(const wgml_gguf *g, uint64_t off, const char **s, size_t *len)
{
    if (s)
        *s = (const char *)g->base + off + 8;
    if (len)
        *len = (size_t)gguf_le(g->base + off, 8);
}

wgml_status wgml_gguf_get_string(const wgml_gguf *g, const char *key, const char **s, size_t *len)
{
    const gguf_kv *kv = NULL;
    wgml_status st = scalar(g, key, &kv, s ? (const void *)s : (const void *)len);
    if (!st && kv->type != WGML_GGUF_STRING)
        return wgml_error(WGML_ERR_DTYPE, "gguf: '%s' is %s, not a string", key, gguf_value_type_names[kv->type]);
    if (!st)
        string_at(g, kv->off, s, len);
    return st;
}

wgml_status wgml_gguf_get_array(const wgml_gguf *g, const char *key, wgml_gguf_type *elem_type, uint64_t *n)
{
    const gguf_kv *kv = NULL;
    wgml_status st = lookup(g, key, &kv);
    if (!st && kv->type != WGML_GGUF_ARRAY)
        return wgml_error(WGML_ERR_DTYPE, "gguf: '%s' is %s, not an array", key, gguf_value_type_names[kv->type]);
    if (!st && elem_type)
        *elem_type = (wgml_gguf_type)kv->elem_type;
    if (!st && n)
        *n = kv->n;
    return st;
}

static wgml_status element(const wgml_gguf *g, int64_t k, uint64_t i, const gguf_kv **kv)
{
    if (!g || k < 0 || k >= g->n_kv)
        return wgml_error(WGML_ERR_INDEX, "gguf: metadata index %" PRId64 " out of range", k);
    *kv = &g->kvs[k];
    const char *key = g->names + (*kv)->key;
    if ((*kv)->type != WGML_GGUF_ARRAY)
        return wgml_error(WGML_ERR_DTYPE, "gguf: '%s' is %s, not an array", key, gguf_value_type_names[(*kv)->type]);
    if (i >= (*kv)->n)
        return wgml_error(WGML_ERR_INDEX, "gguf: element %" PRIu64 " of '%s' is past its %" PRIu64 " elements", i,
                          key, (*kv)->n);
    return WGML_OK;
}

wgml_status wgml_gguf_array_string_at(const wgml_gguf *g, int64_t k, uint64_t i, const char **s, size_t *len)
{
    const gguf_kv *kv = NULL;
    wgml_status st = element(g, k, i, &kv);
    if (!st && kv->elem_type != WGML_GGUF_STRING)
        return wgml_error(WGML_ERR_DTYPE, "gguf: '%s' holds %s, not strings", g->names + kv->key,
                          gguf_value_type_names[kv->elem_type]);
    if (!st)
        string_at(g, kv->str_offs[i], s, len);
    return st;
}

wgml_status wgml_gguf_array_i32_at(const wgml_gguf *g, int64_t k, uint64_t i, int32_t *v)
{
    const gguf_kv *kv = NULL;
    int64_t s;
    wgml_status st = element(g, k, i, &kv);
    if (st)
        return st;
    if (!v)
        return wgml_error(WGML_ERR_INVALID_ARG, "gguf: NULL output");
    uint32_t t = kv->elem_type;
    if (t == WGML_GGUF_STRING || t == WGML_GGUF_BOOL || t == WGML_GGUF_F32 || t == WGML_GGUF_F64)
        return wgml_error(WGML_ERR_DTYPE, "gguf: '%s' holds %s, not integers", g->names + kv->key,
                          gguf_value_type_names[t]);
    st = get_int(g, g->names + kv->key, t, g->base + kv->off + i * gguf_value_type_size[t], INT32_MIN, INT32_MAX, &s,
                 NULL);
    if (!st)
        *v = (int32_t)s;
    return st;
}

wgml_status wgml_gguf_array_f32_at(const wgml_gguf *g, int64_t k, uint64_t i, float *v)
{
    const gguf_kv *kv = NULL;
    wgml_status st = element(g, k, i, &kv);
    if (st)
        return st;
    if (!v)
        return wgml_error(WGML_ERR_INVALID_ARG, "gguf: NULL output");
    uint32_t t = kv->elem_type;
    if (t != WGML_GGUF_F32 && t != WGML_GGUF_F64)
        return wgml_error(WGML_ERR_DTYPE, "gguf: '%s' holds %s, not f32", g->names + kv->key, gguf_value_type_names[t]);
    read_float(t, g->base + kv->off + i * gguf_value_type_size[t], v);
    return WGML_OK;
}

wgml_status wgml_gguf_array_string(const wgml_gguf *g, const char *key, uint64_t i, const char **s, size_t *len)
{
    return wgml_gguf_array_string_at(g, wgml_gguf_find_key(g, key), i, s, len);
}

wgml_status wgml_gguf_array_i32(const wgml_gguf *g, const char *key, uint64_t i, int32_t *v)
{
    return wgml_gguf_array_i32_at(g, wgml_gguf_find_key(g, key), i, v);
}

wgml_status wgml_gguf_array_f32(const wgml_gguf *g, const char *key, uint64_t i, float *v)
{
    return wgml_gguf_array_f32_at(g, wgml_gguf_find_key(g, key), i, v);
}

void wgml_gguf_format_value(const wgml_gguf *g, int64_t i, char *buf, size_t cap)
{
    if (!buf || !cap)
        return;
    buf[0] = 0;
    if (!g || i < 0 || i >= g->n_kv)
        return;
    const gguf_kv *kv = &g->kvs[i];
    const uint8_t *p = g->base + kv->off;
    uint64_t mag;
    int neg;
    float f;
    if (kv->type == WGML_GGUF_ARRAY)
        snprintf(buf, cap, "[%s x %" PRIu64 "]", gguf_value_type_names[kv->elem_type], kv->n);
    else if (kv->type == WGML_GGUF_STRING) {
        const char *s;
        size_t len;
        string_at(g, kv->off, &s, &len);
        snprintf(buf, cap, "%.*s", (int)(len < cap ? len : cap - 1), s);
    } else if (kv->type == WGML_GGUF_BOOL)
        snprintf(buf, cap, "%s", p[0] ? "true" : "false");
    else if (read_float(kv->type, p, &f))
        snprintf(buf, cap, "%g", (double)f);
    else if (read_int(kv->type, p, &mag, &neg))
        snprintf(buf, cap, "%s%" PRIu64, neg ? "-" : "", mag);
}

static void fill_info(const wgml_gguf *g, int64_t i, wgml_gguf_tensor *out)
{
    const gguf_tinfo *t = &g->ts[i];
    memset(out, 0, sizeof *out);
    out->name = g->names + t->name;
    out->ggml_type = t->type;
    out->dtype = wgml_gguf_dtype_from_ggml(t->type);
    out->ndim = t->ndim;
    for (int d = 0; d < t->ndim; d++)
        out->shape[d] = t->ne[t->ndim - 1 - d]; /* GGUF's ne[0] is the innermost dim */
    out->offset = t->abs;
    out->nbytes = t->nbytes;
    out->data = g->base + t->abs;
}

int64_t wgml_gguf_find_tensor(const wgml_gguf *g, const char *name)
{
    if (!g || !name)
        return -1;
    return gguf_hash_find(g, g->t_hash, g->t_hcap, 1, name, strlen(name), NULL);
}

wgml_status wgml_gguf_tensor_info(const wgml_gguf *g, int64_t i, wgml_gguf_tensor *out)
{
    if (!g || !out)
        return wgml_error(WGML_ERR_INVALID_ARG, "wgml_gguf_tensor_info: NULL argument");
    if (i < 0 || i >= g->n_t)
        return wgml_error(WGML_ERR_INDEX, "gguf: tensor index %" PRId64 " out of range (%" PRId64 " tensors)", i,
                          g->n_t);
    fill_info(g, i, out);
    return WGML_OK;
}

wgml_status wgml_gguf_tensor_by_name(const wgml_gguf *g, const char *name, wgml_gguf_tensor *out)
{
    int64_t i = wgml_gguf_find_tensor(g, name);
    if (i < 0)
        return wgml_error(g && name && out ? WGML_ERR_INDEX : WGML_ERR_INVALID_ARG, "gguf: no tensor '%s'",
                          name ? name : "(null)");
    return wgml_gguf_tensor_info(g, i, out);
}

wgml_status wgml_gguf_tensor_data(const wgml_gguf *g, int64_t i, const void **data, uint64_t *nbytes)
{
    wgml_gguf_tensor t;
    wgml_status st = wgml_gguf_tensor_info(g, i, &t);
    if (st)
        return st;
    if (t.dtype == WGML_DTYPE_COUNT)
        return wgml_error(WGML_ERR_UNSUPPORTED, "gguf: tensor '%s' has ggml type %s (%u), which wgml does not support",
                          t.name, wgml_gguf_ggml_type_name(t.ggml_type), t.ggml_type);
    if (data)
        *data = t.data;
    if (nbytes)
        *nbytes = t.nbytes;
    return WGML_OK;
}
