/*
 * Kernels: the template step that specialises embedded .wgsl files, shader
 * compilation under error scopes, and the two in-memory caches.
 *
 * Two caches because lookups happen on every op call: `refs` maps a cheap
 * key (file, entry, defines) straight to a kernel without expanding the
 * template; `kernels` maps the hash of the final source, so two different
 * requests that expand to the same WGSL share one pipeline.  Both grow:
 * a model's graph specialises kernels per shape and dtype, and a fixed
 * table (1,024 slots until issue 8) refused the 1,025th kernel.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

const wg_source *wg_source_find(const char *name)
{
    for (size_t i = 0; i < wg_source_count; i++)
        if (strcmp(wg_sources[i].name, name) == 0)
            return &wg_sources[i];
    return NULL;
}

/* ------------------------------------------------------------ template */

typedef struct strbuf { char *p; size_t n, cap; bool oom; } strbuf;

static void sb_put(strbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

#define MAX_DEFINES 48
/* Values live in one pool: a graph's fused chain passes an expression of
 * several hundred characters as one define. */
typedef struct defines {
    int n;
    bool overflow;            /* a define did not fit: expanding fails */
    char key[MAX_DEFINES][48];
    const char *val[MAX_DEFINES];
    char pool[2048];
    size_t used;
} defines;

static const char *def_get(const defines *d, const char *k, size_t klen)
{
    for (int i = d->n - 1; i >= 0; i--)
        if (strlen(d->key[i]) == klen && memcmp(d->key[i], k, klen) == 0)
            return d->val[i];
    return NULL;
}

static void def_set(defines *d, const char *k, size_t kl, const char *v, size_t vl)
{
    if (d->n >= MAX_DEFINES || kl >= sizeof d->key[0] || vl + 1 > sizeof d->pool - d->used) {
        d->overflow = true;
        return;
    }
    memcpy(d->key[d->n], k, kl);
    d->key[d->n][kl] = 0;
    char *at = d->pool + d->used;
    memcpy(at, v, vl);
    at[vl] = 0;
    d->used += vl + 1;
    d->val[d->n++] = at;
}

static void def_parse(defines *d, const char *s)
{
    while (s && *s) {
        const char *end = strchr(s, ';');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        const char *eq = memchr(s, '=', len);
        if (len)
            def_set(d, s, eq ? (size_t)(eq - s) : len, eq ? eq + 1 : "1",
                    eq ? len - (size_t)(eq - s) - 1 : 1);
        s = end ? end + 1 : NULL;
    }
}

static const char *skip_ws(const char *s, const char *e)
{
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    return s;
}

static size_t word_len(const char *s, const char *e)
{
    size_t n = 0;
    while (s + n < e && (s[n] == '_' || (s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= 'a' && s[n] <= 'z') ||
                         (s[n] >= '0' && s[n] <= '9') || s[n] == '.' || s[n] == '"'))
        n++;
    return n;
}

typedef struct xstate {
    bool native_f16;  /* device has ShaderF16 */
    bool need_f16;    /* some #tensor used it: prepend `enable f16;` */
    char err[256];
} xstate;

/* `#tensor NAME BINDING DTYPE MODE` (see wgsl_tensor.c). */
static bool tensor_directive(strbuf *out, const char *s, const char *e, const defines *d, xstate *x)
{
    char tok[4][64];
    int nt = 0;
    while (nt < 4) {
        s = skip_ws(s, e);
        size_t l = word_len(s, e);
        if (!l || l >= sizeof tok[0])
            break;
        memcpy(tok[nt], s, l);
        tok[nt][l] = 0;
        nt++;
        s += l;
    }
    if (nt != 4)
        return false;
    const char *dt = def_get(d, tok[2], strlen(tok[2]));
    const char *mode = def_get(d, tok[3], strlen(tok[3]));
    /* A mode with a trailing 4 ("r4", "w4") asks for vector accessors for
     * this operand alone; the VEC4 define asks for them for every one. */
    const char *m = mode ? mode : tok[3];
    char md[8];
    size_t ml = strlen(m) < sizeof md ? strlen(m) : sizeof md - 1;
    memcpy(md, m, ml);
    md[ml] = 0;
    bool v4 = def_get(d, "VEC4", 4) != NULL;
    if (ml > 1 && md[ml - 1] == '4') {
        md[ml - 1] = 0;
        v4 = true;
    }
    char buf[4096];
    size_t n = wg_tensor_accessors(buf, sizeof buf, tok[0], atoi(tok[1]), dt ? dt : tok[2], md, x->native_f16, v4,
                                   &x->need_f16);
    if (n == 0 || n >= sizeof buf)
        return false;
    sb_put(out, buf, n);
    return true;
}

static bool expand(strbuf *out, const wg_source *src, const defines *d, int depth, xstate *x)
{
    char *err = x->err;
    size_t errn = sizeof x->err;
    bool active[16] = {true};
    bool taken[16] = {true};
    int lvl = 0;
    const char *p = src->text, *end = src->text + src->len;
    int line_no = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *s = skip_ws(p, le);
        line_no++;
        if (s < le && *s == '#') {
            s++;
            size_t wl = word_len(s, le);
            const char *arg = skip_ws(s + wl, le);
            size_t al = word_len(arg, le);
            bool on = lvl == 0 || active[lvl];
            if (wl == 7 && memcmp(s, "include", 7) == 0) {
                char name[128];
                if (al < 3 || al - 2 >= sizeof name) {
                    snprintf(err, errn, "%s:%d: bad #include", src->name, line_no);
                    return false;
                }
                memcpy(name, arg + 1, al - 2);
                name[al - 2] = 0;
                const wg_source *inc = wg_source_find(name);
                if (!inc || depth > 4) {
                    snprintf(err, errn, "%s:%d: cannot include '%s'", src->name, line_no, name);
                    return false;
                }
                if (on && !expand(out, inc, d, depth + 1, x))
                    return false;
            } else if ((wl == 2 && memcmp(s, "if", 2) == 0) || (wl == 5 && memcmp(s, "ifdef", 5) == 0) ||
                       (wl == 6 && memcmp(s, "ifndef", 6) == 0)) {
                if (lvl >= 15) {
                    snprintf(err, errn, "%s:%d: #if nested too deep", src->name, line_no);
                    return false;
                }
                const char *v = def_get(d, arg, al);
                bool c = wl == 2 ? (v && strcmp(v, "0") != 0) : wl == 5 ? v != NULL : v == NULL;
                lvl++;
                active[lvl] = active[lvl - 1] && c;
                taken[lvl] = c;
            } else if (wl == 6 && memcmp(s, "tensor", 6) == 0) {
                if (on && !tensor_directive(out, s + 6, le, d, x)) {
                    snprintf(err, errn, "%s:%d: bad #tensor (name binding dtype mode)", src->name, line_no);
                    return false;
                }
            } else if (wl == 4 && memcmp(s, "else", 4) == 0 && lvl > 0) {
                active[lvl] = active[lvl - 1] && !taken[lvl];
                taken[lvl] = true;
            } else if (wl == 5 && memcmp(s, "endif", 5) == 0 && lvl > 0) {
                lvl--;
            } else {
                snprintf(err, errn, "%s:%d: unknown directive", src->name, line_no);
                return false;
            }
        } else if (lvl == 0 || active[lvl]) {
            const char *q = p;
            while (q < le) {
                const char *o = q;
                while (o + 1 < le && !(o[0] == '{' && o[1] == '{'))
                    o++;
                if (o + 1 >= le) {
                    sb_put(out, q, (size_t)(le - q));
                    break;
                }
                sb_put(out, q, (size_t)(o - q));
                const char *c = o + 2;
                while (c + 1 < le && !(c[0] == '}' && c[1] == '}'))
                    c++;
                const char *v = c + 1 < le ? def_get(d, o + 2, (size_t)(c - o - 2)) : NULL;
                if (!v) {
                    snprintf(err, errn, "%s:%d: undefined template key '%.*s'", src->name, line_no,
                             (int)(c - o - 2), o + 2);
                    return false;
                }
                sb_put(out, v, strlen(v));
                q = c + 2;
            }
            sb_put(out, "\n", 1);
        }
        p = nl ? nl + 1 : end;
    }
    if (lvl != 0) {
        snprintf(err, errn, "%s: unterminated #if", src->name);
        return false;
    }
    return true;
}

char *wg_template_expand(wgml_ctx *ctx, const char *file, const char *defs)
{
    const wg_source *src = wg_source_find(file);
    if (!src) {
        wg_fail(WGML_ERR_INTERNAL, "no embedded kernel source '%s'", file);
        return NULL;
    }
    defines d = {0};
    /* Device facts every template may test. */
    if (wg_has(ctx, WGML_FEATURE_F16))
        def_set(&d, "HAS_F16", 7, "1", 1);
    if (wg_has(ctx, WGML_FEATURE_SUBGROUPS))
        def_set(&d, "HAS_SUBGROUPS", 13, "1", 1);
    def_parse(&d, defs);
    if (d.overflow) {
        wg_fail(WGML_ERR_INTERNAL, "kernel template %s: more than %d defines or %zu bytes of them: %.120s", file,
                MAX_DEFINES, sizeof d.pool, defs ? defs : "");
        return NULL;
    }
    strbuf out = {0};
    xstate x = {0};
    x.native_f16 = wg_has(ctx, WGML_FEATURE_F16);
    /* a template computing in f16 itself (gemm.wgsl's H16) asks with ENABLE_F16 */
    x.need_f16 = x.native_f16 && def_get(&d, "ENABLE_F16", 10) != NULL;
    /* Room for `enable f16;`, which must precede every declaration. */
    sb_put(&out, "             \n", 14);
    if (!expand(&out, src, &d, 0, &x)) {
        free(out.p);
        wg_fail(WGML_ERR_INTERNAL, "kernel template: %s", x.err);
        return NULL;
    }
    if (x.need_f16 && !out.oom)
        memcpy(out.p, "enable f16;", 11);
    if (out.oom) {
        free(out.p);
        wg_fail(WGML_ERR_OOM, "out of host memory expanding %s", file);
        return NULL;
    }
    return out.p;
}

/* ------------------------------------------------------------ compile */

/* WGML_DUMP_KERNELS=dir: every compiled kernel's WGSL as dir/<name>-<key>.wgsl,
 * and a line "<seconds> <name>-<key>" appended to dir/compile.txt (which
 * kernels a CPU driver takes long to compile: CI's time is mostly that). */
static void dump_kernel(const wgml_kernel *k, const char *wgsl, double seconds)
{
    const char *dir = getenv("WGML_DUMP_KERNELS");
    if (!dir || !*dir)
        return;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s-%016llx.wgsl", dir, k->name, (unsigned long long)k->key);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(wgsl, f);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/compile.txt", dir);
    f = fopen(path, "a");
    if (f) {
        fprintf(f, "%.3f %s-%016llx\n", seconds, k->name, (unsigned long long)k->key);
        fclose(f);
    }
}

static wgml_status create_pipeline(wgml_ctx *ctx, wgml_kernel *k, const char *wgsl, const char *entry)
{
    WGPUShaderSourceWGSL w = {0};
    w.chain.sType = WGPUSType_ShaderSourceWGSL;
    w.code = (WGPUStringView){wgsl, WGPU_STRLEN};
    WGPUShaderModuleDescriptor md = {0};
    md.nextInChain = &w.chain;
    md.label = (WGPUStringView){k->name, WGPU_STRLEN};

    WGPUBindGroupLayoutEntry e[WG_MAX_BUFFERS + 1];
    memset(e, 0, sizeof e);
    e[0].binding = 0;
    e[0].visibility = WGPUShaderStage_Compute;
    e[0].buffer.type = WGPUBufferBindingType_Uniform;
    e[0].buffer.hasDynamicOffset = 1;
    for (int i = 0; i < k->n_buffers; i++) {
        e[i + 1].binding = (uint32_t)i + 1;
        e[i + 1].visibility = WGPUShaderStage_Compute;
        e[i + 1].buffer.type = (k->readonly_mask >> i) & 1 ? WGPUBufferBindingType_ReadOnlyStorage
                                                           : WGPUBufferBindingType_Storage;
    }
    WGPUBindGroupLayoutDescriptor bd = {0};
    bd.entryCount = (size_t)k->n_buffers + 1;
    bd.entries = e;

    wg_scope_push(ctx);
    WGPUShaderModule mod = wg_native_create_module(ctx->device, &md, ctx->shader_checks);
    k->bgl = wgpuDeviceCreateBindGroupLayout(ctx->device, &bd);
    WGPUPipelineLayoutDescriptor pd = {0};
    pd.bindGroupLayoutCount = 1;
    pd.bindGroupLayouts = &k->bgl;
    WGPUPipelineLayout pl = wgpuDeviceCreatePipelineLayout(ctx->device, &pd);
    WGPUComputePipelineDescriptor cd = {0};
    cd.label = md.label;
    cd.layout = pl;
    cd.compute.module = mod;
    cd.compute.entryPoint = (WGPUStringView){entry, WGPU_STRLEN};
    k->pipeline = wgpuDeviceCreateComputePipeline(ctx->device, &cd);
    char what[160];
    snprintf(what, sizeof what, "kernel '%s'", k->name);
    wgml_status st = wg_scope_pop(ctx, WGML_ERR_SHADER, what);
    if (mod)
        wgpuShaderModuleRelease(mod);
    if (pl)
        wgpuPipelineLayoutRelease(pl);
    ctx->stats.pipelines_compiled++;
    if (st == WGML_OK && (!k->pipeline || !k->bgl))
        st = wg_fail(WGML_ERR_SHADER, "%s: pipeline creation failed", what);
    return st;
}

static void kernel_free(wgml_kernel *k)
{
    if (!k)
        return;
    if (k->pipeline)
        wgpuComputePipelineRelease(k->pipeline);
    if (k->bgl)
        wgpuBindGroupLayoutRelease(k->bgl);
    free(k);
}

/* ------------------------------------------------------------ tables */

#define KT_MIN_CAP 256

static wgml_kernel *kt_find(const wg_ktable *t, uint64_t key)
{
    if (!t->cap)
        return NULL;
    for (size_t i = key & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        if (!t->slots[i].k)
            return NULL; /* the load stays <= 5/8: an empty slot ends every probe */
        if (t->slots[i].key == key)
            return t->slots[i].k;
    }
}

static void kt_put(wg_kslot *slots, size_t cap, uint64_t key, wgml_kernel *k)
{
    size_t i = key & (cap - 1);
    while (slots[i].k)
        i = (i + 1) & (cap - 1);
    slots[i].key = key;
    slots[i].k = k;
}

/* Adds key -> k (key not present), doubling the table first when this
 * entry would take the load past 5/8: linear probing's expected probe
 * count climbs steeply beyond ~70%. */
static wgml_status kt_insert(wg_ktable *t, uint64_t key, wgml_kernel *k)
{
    if ((t->n + 1) * 8 > t->cap * 5) {
        size_t cap = t->cap ? t->cap * 2 : KT_MIN_CAP;
        wg_kslot *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return wg_fail(WGML_ERR_OOM, "out of host memory growing the kernel table to %zu slots", cap);
        for (size_t i = 0; i < t->cap; i++)
            if (t->slots[i].k)
                kt_put(slots, cap, t->slots[i].key, t->slots[i].k);
        free(t->slots);
        t->slots = slots;
        t->cap = cap;
    }
    kt_put(t->slots, t->cap, key, k);
    t->n++;
    return WGML_OK;
}

static void kt_free(wg_ktable *t)
{
    free(t->slots);
    memset(t, 0, sizeof *t);
}

/* ------------------------------------------------------------ lookups */

wgml_status wg_kernel_compile(wgml_ctx *ctx, const char *name, const char *wgsl, const char *entry,
                              int n_buffers, unsigned ro_mask, wgml_kernel **out)
{
    if (n_buffers < 0 || n_buffers > WG_MAX_BUFFERS)
        return wg_fail(WGML_ERR_INVALID_ARG, "kernel '%s': %d buffers (at most %d)", name, n_buffers,
                       WG_MAX_BUFFERS);
    uint64_t key = wg_hash_bytes(WG_HASH_SEED, wgsl, strlen(wgsl));
    key = wg_hash_bytes(key, entry, strlen(entry) + 1);
    key = wg_hash_bytes(key, &n_buffers, sizeof n_buffers);
    key = wg_hash_bytes(key, &ro_mask, sizeof ro_mask);
    wgml_kernel *k = kt_find(&ctx->kernels, key);
    if (k) {
        ctx->stats.pipeline_cache_hits++;
        *out = k;
        return WGML_OK;
    }
    k = calloc(1, sizeof *k);
    if (!k)
        return wg_fail(WGML_ERR_OOM, "out of host memory");
    k->ctx = ctx;
    k->key = key;
    k->n_buffers = n_buffers;
    k->readonly_mask = ro_mask;
    snprintf(k->name, sizeof k->name, "%s", name ? name : entry);
    double t0 = wg_now_s();
    wgml_status st = create_pipeline(ctx, k, wgsl, entry);
    dump_kernel(k, wgsl, wg_now_s() - t0);
    if (st == WGML_OK)
        st = kt_insert(&ctx->kernels, key, k);
    if (st != WGML_OK) {
        kernel_free(k);
        return st;
    }
    *out = k;
    return WGML_OK;
}

wgml_status wg_kernel_get(wgml_ctx *ctx, const wg_kernel_ref *ref, wgml_kernel **out)
{
    const char *defs = ref->defines ? ref->defines : "";
    uint64_t key = wg_hash_bytes(WG_HASH_SEED, ref->file, strlen(ref->file) + 1);
    key = wg_hash_bytes(key, ref->entry, strlen(ref->entry) + 1);
    key = wg_hash_bytes(key, defs, strlen(defs) + 1);
    key = wg_hash_bytes(key, &ref->n_buffers, sizeof ref->n_buffers);
    key = wg_hash_bytes(key, &ref->readonly_mask, sizeof ref->readonly_mask);
    wgml_kernel *k = kt_find(&ctx->refs, key);
    if (k) {
        ctx->stats.pipeline_cache_hits++;
        *out = k;
        return WGML_OK;
    }
    char *src = wg_template_expand(ctx, ref->file, defs);
    if (!src)
        return WGML_ERR_INTERNAL;
    char name[96];
    snprintf(name, sizeof name, "%.*s:%s%s%.40s%s", (int)(strlen(ref->file) - 5), ref->file, ref->entry,
             *defs ? "[" : "", defs, *defs ? "]" : "");
    wgml_status st = wg_kernel_compile(ctx, name, src, ref->entry, ref->n_buffers, ref->readonly_mask, &k);
    free(src);
    if (st != WGML_OK)
        return st;
    /* A ref table that cannot grow costs only a template expansion on the
     * next request: the kernel itself is owned by `kernels`. */
    (void)kt_insert(&ctx->refs, key, k);
    *out = k;
    return WGML_OK;
}

wgml_ctx *wg_kernel_ctx(const wgml_kernel *k) { return k->ctx; }
const char *wg_kernel_name(const wgml_kernel *k) { return k->name; }

void wg_kernels_release(wgml_ctx *ctx)
{
    for (size_t i = 0; i < ctx->kernels.cap; i++)
        kernel_free(ctx->kernels.slots[i].k);
    kt_free(&ctx->kernels);
    kt_free(&ctx->refs);
}

wgml_status wgml_kernel_create(wgml_ctx *ctx, const wgml_kernel_desc *d, wgml_kernel **out)
{
    wgml_status st = wg_check(ctx);
    if (st != WGML_OK)
        return st;
    if (!d || !d->wgsl || !d->entry || !out)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_kernel_create: desc, wgsl, entry and out are required");
    return wg_kernel_compile(ctx, d->name ? d->name : d->entry, d->wgsl, d->entry, d->n_buffers,
                             d->readonly_mask, out);
}

wgml_status wgml_kernel_builtin(wgml_ctx *ctx, const char *file, const char *entry, const char *defs,
                                int n_buffers, unsigned readonly_mask, wgml_kernel **out)
{
    wgml_status st = wg_check(ctx);
    if (st != WGML_OK)
        return st;
    if (!file || !entry || !out)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_kernel_builtin: file, entry and out are required");
    if (!wg_source_find(file))
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_kernel_builtin: no embedded kernel '%s'", file);
    if (n_buffers < 0 || n_buffers > WG_MAX_BUFFERS)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_kernel_builtin: %d buffers (at most %d)", n_buffers,
                       WG_MAX_BUFFERS);
    wg_kernel_ref ref = {file, entry, defs, n_buffers, readonly_mask};
    return wg_kernel_get(ctx, &ref, out);
}
