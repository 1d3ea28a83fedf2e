/* The `wgml` command-line tool: a thin front over the library. */
#include "cli.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: wgml <command> [options]\n"
            "\n"
            "commands:\n"
            "  info              adapter, driver, enabled features, subgroup size, limits\n"
            "  info --adapters   every adapter WebGPU can see (WGML_ADAPTER indexes this list)\n"
            "  selfcheck         run a vector op and a reduction on the GPU, check them on the CPU\n"
            "  ops               op x dtype coverage table (from the op registry)\n"
            "  bench dispatch    us per dispatch (10,000 dependent dispatches) and per flush+wait\n"
            "  bench ops [MiB] [rounds]  GB/s of add, softmax, rms_norm, rope, cast, get_rows on big tensors\n"
            "\n"
            "options:\n"
            "  -h, --help        this text\n"
            "  --version         wgml's version\n"
            "\n"
            "environment:\n"
            "  WGML_ADAPTER=i|name   pick adapter by index or name substring\n"
            "  WGML_DISABLE=list     features to leave off: f16,subgroups,timestamps,immediates,pipeline-cache\n"
            "  WGML_PROFILE=1        per-kernel GPU time summary at exit\n"
            "  WGML_SHADER_CHECKS=1  compile kernels with runtime bounds checks\n"
            "  WGML_NO_DISK_CACHE=1  no on-disk pipeline cache (default $XDG_CACHE_HOME/wgml)\n");
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
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
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("wgml %s\n", WGML_VERSION_STRING);
        return 0;
    }
    if (!strcmp(cmd, "info"))
        return cmd_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "selfcheck"))
        return cmd_selfcheck(argc - 1, argv + 1);
    if (!strcmp(cmd, "ops"))
        return cmd_ops(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench"))
        return cmd_bench(argc - 1, argv + 1);
    fprintf(stderr, "wgml: unknown command '%s' (try wgml --help)\n", cmd);
    return 2;
}
