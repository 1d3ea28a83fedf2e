/* `wgml ops`: the op x dtype coverage table, generated from the op
 * registry (wgml_op_get), so it always matches what the library has. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

int cmd_ops(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    size_t n = wgml_op_count();
    int w = 12;
    printf("%-*s %-12s", w, "op", "family");
    for (int d = 0; d < WGML_DTYPE_COUNT; d++)
        printf(" %-6s", wgml_dtype_name((wgml_dtype)d));
    printf("\n");
    for (size_t i = 0; i < n; i++) {
        const wgml_op_info *op = wgml_op_get(i);
        printf("%-*s %-12s", w, op->name, op->family);
        for (int d = 0; d < WGML_DTYPE_COUNT; d++)
            printf(" %-6s", (op->dtypes >> d) & 1 ? "x" : ".");
        printf("\n");
    }
    printf("%zu ops; x = accepted as the main input dtype\n", n);
    return 0;
}
