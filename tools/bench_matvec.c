/* STUB (scaffolding for issue 9): `wgml bench matvec`, replaced by its family's benchmark. */
#include "cli.h"

#include <stdio.h>

int bench_matvec(wgml_ctx *ctx, int argc, char **argv)
{
    (void)ctx, (void)argc, (void)argv;
    fprintf(stderr, "wgml bench matvec: not built yet\n");
    return 1;
}
