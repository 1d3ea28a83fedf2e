/* Sub-commands of the `wgml` tool; each returns the process exit code. */
#ifndef WGML_CLI_H
#define WGML_CLI_H

#include "wgml.h"

#include <stdbool.h>

int cmd_info(int argc, char **argv);
int cmd_selfcheck(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_gguf(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int bench_ops(wgml_ctx *ctx, int argc, char **argv);
int bench_variants(wgml_ctx *ctx, int argc, char **argv);
int bench_graph(wgml_ctx *ctx, int argc, char **argv);
int bench_gemm(wgml_ctx *ctx, int argc, char **argv);
int bench_matvec(wgml_ctx *ctx, int argc, char **argv);
int bench_moe(wgml_ctx *ctx, int argc, char **argv);
int bench_attn(wgml_ctx *ctx, int argc, char **argv);
int bench_llm(wgml_ctx *ctx, int argc, char **argv);
int bench_sample(wgml_ctx *ctx, int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_perplexity(int argc, char **argv);

/* Opens a context or prints why not; NULL on failure. */
wgml_ctx *cli_open(void);
/* Prints "wgml: <what>: STATUS: message" to stderr; returns 1. */
int cli_error(const char *what, wgml_status st);
double cli_now(void);
/* A bench's [--quick] [--json] (argv[0] its name); 2 after a usage line
 * for anything else, else 0. */
int cli_bench_flags(int argc, char **argv, bool *quick, bool *json);
/* The same, then the adapter's facts into *info (a failure printed, non-zero)
 * and, with --json, the opening `{"adapter": ..., "results": [`. */
int cli_bench_start(wgml_ctx *ctx, int argc, char **argv, bool *quick, bool *json, wgml_device_info *info);
/* Whether `name` is one of the comma-separated items of `list`. */
bool cli_listed(const char *list, const char *name);
/* A bench's graph once built (st: how building went): compiled into
 * *out, or freed on any failure.  Returns the status. */
struct wgml_graph;
wgml_status cli_graph_done(struct wgml_graph *g, wgml_status st, struct wgml_graph **out);
/* Median seconds per call of `step` (calls of one step): 0.3 s of
 * warm-up first unless quick, then reps timed steps (reps <= 64). */
wgml_status cli_time_median(wgml_status (*step)(void *user), void *user, int calls, int reps, bool quick,
                            double *sec);
/* The whole file ("-": stdin), malloc'd; NULL on failure. */
char *cli_read_file(const char *path, size_t *len);

#endif
