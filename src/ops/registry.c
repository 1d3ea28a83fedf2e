/*
 * The op registry behind wgml_op_get and `wgml ops`: each family file
 * contributes its rows; nothing here is typed by hand.  Families are weak
 * references so the table is whatever the library was built with.
 */
#include "ops.h"

#define FAMILIES(X) \
    X(elementwise) X(movement) X(indexing) X(reduce) X(softmax) X(norm) X(rope) X(glu) X(sample) X(quant)

#define DECLARE(f) wg_op_table wg_##f##_ops(void) __attribute__((weak));
FAMILIES(DECLARE)

static wg_op_table (*const families[])(void) = {
#define LIST(f) wg_##f##_ops,
    FAMILIES(LIST)
};

static const wgml_op_info *row(size_t i, size_t *total)
{
    size_t n = 0;
    for (size_t f = 0; f < sizeof families / sizeof *families; f++) {
        if (!families[f])
            continue;
        wg_op_table t = families[f]();
        if (i < n + t.n && total == NULL)
            return &t.rows[i - n];
        n += t.n;
    }
    if (total)
        *total = n;
    return NULL;
}

size_t wgml_op_count(void)
{
    size_t n = 0;
    row(0, &n);
    return n;
}

const wgml_op_info *wgml_op_get(size_t i) { return row(i, NULL); }
