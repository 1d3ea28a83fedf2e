/*
 * Looking at graphs: counters, a text or Graphviz DOT dump (shapes, arena
 * places after compile, GPU time after a profiled run) and the per-node
 * profile.
 */
#include "graph.h"

#include <stdlib.h>
#include <string.h>

wgml_status wgml_graph_stats_get(const wgml_graph *g, wgml_graph_stats *out)
{
    if (!g || !out)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_stats_get: NULL argument");
    memset(out, 0, sizeof *out);
    out->nodes = g->n;
    for (size_t i = 0; i < g->n; i++)
        out->op_nodes += g->nodes[i]->kind == WG_N_OP;
    out->fused_nodes = g->fused;
    out->dispatches = g->cur ? g->cur->rec.n : 0;
    out->arena_bytes = g->arena_bytes;
    out->scratch_bytes = g->scratch_cap;
    out->peak_live_bytes = g->peak;
    out->intermediate_bytes = g->inter_bytes;
    out->recordings = g->recordings;
    out->nodes_encoded = g->nodes_encoded;
    out->nodes_reused = g->nodes_reused;
    return WGML_OK;
}

static double node_us(const wgml_graph *g, const wgml_node *n)
{
    return g->node_ns ? g->node_ns[n->id] * 1e-3 : 0;
}

static void place_str(const wgml_graph *g, const wgml_node *n, char *buf, size_t size)
{
    if (n->fused_into)
        snprintf(buf, size, "fused into node %d", n->fused_into->id);
    else if (!g->compiled || !n->root)
        snprintf(buf, size, "-");
    else if (n->kind == WG_N_TENSOR || n->root->kind == WG_N_TENSOR)
        snprintf(buf, size, "persistent");
    else if (n->root != n)
        snprintf(buf, size, "alias of node %d", n->root->id);
    else if (n->produced_by) /* a fused residual add's sum (by its norm), a fused rope's output */
        snprintf(buf, size, "arena [%llu, +%llu) written by node %d", (unsigned long long)n->offset,
                 (unsigned long long)n->bytes, n->produced_by->id);
    else
        snprintf(buf, size, "arena [%llu, +%llu)%s", (unsigned long long)n->offset, (unsigned long long)n->bytes,
                 n->inplace_of ? " in place" : "");
}

wgml_status wgml_graph_dump(const wgml_graph *g, FILE *f, int format)
{
    if (!g || !f || (format != 0 && format != 1))
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_dump: NULL argument or format %d (0 text, 1 DOT)", format);
    if (format == 1)
        fprintf(f, "digraph wgml {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n");
    else
        fprintf(f, "graph: %zu nodes, %d symbolic dims, arena %llu bytes (peak live %llu, all intermediates %llu)\n",
                g->n, g->ndims, (unsigned long long)g->arena_bytes, (unsigned long long)g->peak,
                (unsigned long long)g->inter_bytes);
    for (size_t i = 0; i < g->n; i++) {
        const wgml_node *n = g->nodes[i];
        char shape[128], place[96];
        wg_desc_str(&n->d, g->dim_names, shape, sizeof shape);
        place_str(g, n, place, sizeof place);
        if (format == 1) {
            fprintf(f, "  n%d [label=\"%d %s%s%s\\n%s %s\\n%s", n->id, n->id, wg_node_kind_name(n), n->name ? " " : "",
                    n->name ? n->name : "", wgml_dtype_name(n->d.dtype), shape, place);
            if (node_us(g, n) > 0)
                fprintf(f, "\\n%.1f us", node_us(g, n));
            fprintf(f, "\"%s];\n", n->output ? ", style=bold" : n->kind == WG_N_INPUT ? ", style=dashed" : "");
            for (int j = 0; j < n->nin; j++)
                if (n->in[j])
                    fprintf(f, "  n%d -> n%d;\n", n->in[j]->id, n->id);
            continue;
        }
        fprintf(f, "%4d %-12s %-14s %-5s %-20s", n->id, wg_node_kind_name(n), n->name ? n->name : "",
                wgml_dtype_name(n->d.dtype), shape);
        for (int j = 0; j < n->nin; j++)
            fprintf(f, "%s%s", j ? "," : " <- ", n->in[j] ? "" : "-");
        for (int j = 0; j < n->nin; j++)
            if (n->in[j])
                fprintf(f, "%s%d", j ? " " : "", n->in[j]->id);
        bool op = n->kind == WG_N_OP;
        fprintf(f, "  %s%s%s%s", place, n->output ? " output" : "",
                op && n->p.norm_split ? " +split codes" : op && n->p.xq_tail ? " +codes" : "",
                op && n->p.xq_split ? " reads split codes" : op && n->p.xq_in ? " reads x codes" : "");
        if (node_us(g, n) > 0)
            fprintf(f, "  %.1f us", node_us(g, n));
        fprintf(f, "\n");
    }
    if (format == 1)
        fprintf(f, "}\n");
    return WGML_OK;
}

static const wgml_graph *sort_g;
static int by_time(const void *a, const void *b)
{
    double x = sort_g->node_ns[*(const int *)a], y = sort_g->node_ns[*(const int *)b];
    return (x < y) - (x > y);
}

wgml_status wgml_graph_profile_print(wgml_graph *g, FILE *f)
{
    if (!g || !f)
        return wg_fail(WGML_ERR_INVALID_ARG, "wgml_graph_profile_print: NULL argument");
    if (!g->node_ns)
        return wg_fail(WGML_ERR_UNSUPPORTED, "wgml_graph_profile_print: profiling was off when the graph was "
                       "compiled (set WGML_PROFILE=1)");
    wgml_status st = wgml_ctx_sync(g->ctx); /* timestamps are collected at the wait */
    if (st != WGML_OK)
        return st;
    int *ids = malloc((g->n ? g->n : 1) * sizeof *ids);
    if (!ids)
        return wg_fail(WGML_ERR_OOM, "out of host memory");
    double total = 0;
    for (size_t i = 0; i < g->n; i++) {
        ids[i] = (int)i;
        total += g->node_ns[i];
    }
    sort_g = g;
    qsort(ids, g->n, sizeof *ids, by_time);
    fprintf(f, "graph profile (GPU time per node, all runs): total %.1f us\n", total * 1e-3);
    for (size_t i = 0; i < g->n && g->node_ns[ids[i]] > 0; i++) {
        const wgml_node *n = g->nodes[ids[i]];
        char lab[160];
        fprintf(f, "  %10.1f us %5.1f%%  %s\n", g->node_ns[n->id] * 1e-3,
                total > 0 ? 100 * g->node_ns[n->id] / total : 0, wg_node_label(n, lab, sizeof lab));
    }
    free(ids);
    return WGML_OK;
}
