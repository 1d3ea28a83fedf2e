/* The `wgml` command-line tool: a thin front over the library. */
#include "cli.h"
#include "wgml_graph.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmd_help(int argc, char **argv);

static int cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("wgml %s\n", WGML_VERSION_STRING);
    return 0;
}

/* Every command once: main() dispatches on `names` (alternatives split by
 * '|') and --help prints `help` (one or more "usage  description" lines),
 * so a command cannot be added to one and forgotten in the other. */
typedef struct cli_command {
    const char *names;
    int (*fn)(int argc, char **argv);
    const char *help;
} cli_command;

static const cli_command commands[] = {
    {"info", cmd_info,
     "info              adapter, driver, enabled features, subgroup size, limits\n"
     "info --adapters   every adapter WebGPU can see (WGML_ADAPTER indexes this list)"},
    {"selfcheck", cmd_selfcheck, "selfcheck         run a vector op and a reduction on the GPU, check them on the CPU"},
    {"ops", cmd_ops, "ops               op x dtype coverage table (from the op registry)"},
    {"bench", cmd_bench,
     "bench dispatch    us per dispatch (10,000 dependent dispatches) and per flush+wait\n"
     "bench ops [MiB] [rounds]  GB/s of add, softmax, rms_norm, rope, cast, get_rows on big tensors\n"
     "bench variants [MiB]  elementwise kernel shapes compared (a tuning tool)\n"
     "bench graph [chain|wide|block|decoder]... [--quick] [--json] [--dot] [--kv N]  graph replay vs\n"
     "                  eager: 10,000 dependent dispatches, a transformer block (--dot: its compiled\n"
     "                  graph as Graphviz DOT), a Llama-3-8B decoder block's decode step (q4_K, KV N\n"
     "                  rows, default 4096) against the copy bandwidth\n"
     "bench gemm | matvec | moe | attn [--quick] [--json]   matrix products, MoE and attention (attn: also\n"
     "                  [--decode] [--skv N]: decode shapes only, shapes of N keys only)\n"
     "bench llm -m FILE.gguf [-p 512] [-n 128] [-d 0] [-r 3] [--json] [--sync] [--prefill-f32]   prompt and generation tokens/s"},
    {"gguf", cmd_gguf, "gguf FILE.gguf    a GGUF's header, metadata and tensor table (name, dtype, shape, bytes)"},
    {"tokenize", cmd_tokenize,
     "tokenize -m FILE.gguf [-p text | -f file|-] [--no-special] [--ids-only]\n"
     "                  the model's tokenizer: ids and pieces (--no-special: no BOS/EOS, \"<|..|>\" as text)"},
    {"generate", cmd_generate,
     "generate -m FILE.gguf -p text [-n 128] [--temp T] [--top-k K] [--top-p P] [--min-p P] [--seed S]\n"
     "                  [--chat] [--ctx N] [--batch N] [--prefill-f32]   stream a model's continuation to stdout"},
    {"perplexity", cmd_perplexity, "perplexity -m FILE.gguf -f text.txt [--ctx N] [--prefill-f32]   mean NLL and perplexity of a text"},
    {"help|-h|--help", cmd_help, "-h, --help        this text"},
    {"version|--version", cmd_version, "--version         wgml's version"},
};
#define N_COMMANDS (sizeof commands / sizeof *commands)

static bool names_match(const char *names, const char *cmd)
{
    size_t n = strlen(cmd);
    for (const char *p = names; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, cmd, n) == 0)
            return true;
        p += len + (bar != NULL);
    }
    return false;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: wgml <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        for (const char *p = commands[i].help; *p;) {
            const char *nl = strchr(p, '\n');
            int len = nl ? (int)(nl - p) : (int)strlen(p);
            fprintf(f, "  %.*s\n", len, p);
            p += len + (nl != NULL);
        }
    fprintf(f,
            "\n"
            "environment:\n"
            "  WGML_ADAPTER=i|name   pick adapter by index or name substring\n"
            "  WGML_DISABLE=list     features to leave off: f16,subgroups,timestamps,immediates,pipeline-cache\n"
            "  WGML_PROFILE=1        per-kernel GPU time summary at exit\n"
            "  WGML_DUMP_KERNELS=dir each compiled kernel's WGSL into dir (and dir/compile.txt)\n"
            "  WGML_SHADER_CHECKS=1  compile kernels with runtime bounds checks\n"
            "  WGML_NO_DISK_CACHE=1  no on-disk pipeline cache (default $XDG_CACHE_HOME/wgml)\n");
}

static int cmd_help(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    usage(stdout);
    return 0;
}

char *cli_read_file(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *p = realloc(buf, cap * 2);
        if (!p) {
            free(buf);
            buf = NULL;
        } else {
            buf = p;
            cap *= 2;
        }
    }
    if (f != stdin)
        fclose(f);
    *len = n;
    return buf;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

wgml_status cli_graph_done(wgml_graph *g, wgml_status st, wgml_graph **out)
{
    if (st == WGML_OK)
        st = wgml_graph_compile(g, NULL);
    if (st != WGML_OK) {
        wgml_graph_free(g);
        return st;
    }
    *out = g;
    return WGML_OK;
}

static int cmp_sec(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

wgml_status cli_time_median(wgml_status (*step)(void *user), void *user, int calls, int reps, bool quick, double *sec)
{
    double t[64];
    int n = 0;
    reps = reps > 64 ? 64 : reps;
    wgml_status st = WGML_OK;
    double w0 = 0;
    bool first = true;
    for (int r = -1; r < reps && st == WGML_OK; r++) { /* r = -1: warm-up, 0.3 s at least */
        double t0 = cli_now();
        st = step(user);
        if (first) /* the 0.3 s count from after the compiling first step (bench_attn.c says why) */
            w0 = cli_now(), first = false;
        if (r >= 0)
            t[n++] = (cli_now() - t0) / calls;
        else if (!quick && cli_now() - w0 < 0.3)
            r--;
    }
    if (st == WGML_OK && n > 0) {
        qsort(t, (size_t)n, sizeof *t, cmp_sec);
        *sec = t[n / 2];
    }
    return st;
}

int cli_error(const char *what, wgml_status st)
{
    fprintf(stderr, "wgml: %s: %s: %s\n", what, wgml_status_name(st), wgml_last_error());
    return 1;
}

wgml_ctx *cli_open(void)
{
    wgml_ctx *ctx = NULL;
    wgml_status st = wgml_ctx_create(NULL, &ctx);
    if (st != WGML_OK) {
        cli_error("opening the GPU", st);
        return NULL;
    }
    return ctx;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (names_match(commands[i].names, argv[1]))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "wgml: unknown command '%s' (try wgml --help)\n", argv[1]);
    return 2;
}
