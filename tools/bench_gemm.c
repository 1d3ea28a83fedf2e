/* STUB (scaffolding for issue 9): `wgml bench gemm`, replaced by its family's benchmark. */
#include "cli.h"

#include <stdio.h>

int bench_gemm(wgml_ctx *ctx, int argc, char **argv)
{
    (void)ctx, (void)argc, (void)argv;
    fprintf(stderr, "wgml bench gemm: not built yet\n");
    return 1;
}
