/* STUB (scaffolding for issue 9): `wgml bench attn`, replaced by its family's benchmark. */
#include "cli.h"

#include <stdio.h>

int bench_attn(wgml_ctx *ctx, int argc, char **argv)
{
    (void)ctx, (void)argc, (void)argv;
    fprintf(stderr, "wgml bench attn: not built yet\n");
    return 1;
}
