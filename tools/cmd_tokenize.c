/* `wgml tokenize -m model.gguf [-p text | -f file] [--no-special] [--ids-only]`:
 * the model's tokenizer on a text (no GPU). */
#include "cli.h"
#include "wgml_llm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void)
{
    fprintf(stderr, "usage: wgml tokenize -m model.gguf [-p text | -f file|-] [--no-special] [--ids-only]\n"
                    "  --no-special  add no BOS/EOS and read \"<|...|>\" in the text as plain text\n"
                    "  --ids-only    print the ids on one line, without pieces\n");
    return 2;
}

int cmd_tokenize(int argc, char **argv)
{
    const char *model = NULL, *prompt = NULL, *file = NULL;
    bool special = true, ids_only = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc)
            model = argv[++i];
        else if (!strcmp(argv[i], "-p") && i + 1 < argc)
            prompt = argv[++i];
        else if (!strcmp(argv[i], "-f") && i + 1 < argc)
            file = argv[++i];
        else if (!strcmp(argv[i], "--no-special"))
            special = false;
        else if (!strcmp(argv[i], "--ids-only"))
            ids_only = true;
        else
            return usage();
    }
    if (!model || (!prompt == !file))
        return usage();
    size_t len = 0;
    char *text = file ? cli_read_file(file, &len) : NULL;
    if (file && !text) {
        fprintf(stderr, "wgml: cannot read %s\n", file);
        return 1;
    }
    if (prompt)
        len = strlen(prompt);
    wgml_gguf *g;
    wgml_vocab *v = NULL;
    int32_t *ids = NULL;
    char *piece = NULL;
    int rc = 1;
    size_t n = 0;
    wgml_status st = wgml_gguf_open(model, &g);
    if (st) {
        cli_error("reading the model", st);
        goto out;
    }
    st = wgml_vocab_load(g, &v);
    wgml_gguf_close(g);
    const char *src = prompt ? prompt : text;
    if (st || (st = wgml_vocab_tokenize(v, src, len, special, special, NULL, 0, &n))) {
        cli_error("tokenizing", st);
        goto out;
    }
    ids = malloc((n ? n : 1) * sizeof *ids);
    if (!ids || (st = wgml_vocab_tokenize(v, src, len, special, special, ids, n, &n))) {
        cli_error("tokenizing", ids ? st : WGML_ERR_OOM);
        goto out;
    }
    if (ids_only) {
        for (size_t i = 0; i < n; i++)
            printf("%s%d", i ? " " : "", ids[i]);
        printf("\n");
    } else {
        for (size_t i = 0; i < n; i++) {
            size_t plen = 0;
            wgml_vocab_token_piece(v, ids[i], true, NULL, 0, &plen);
            free(piece);
            piece = malloc(plen + 1);
            if (!piece)
                goto out;
            wgml_vocab_token_piece(v, ids[i], true, piece, plen + 1, &plen);
            printf("%8d  '", ids[i]);
            for (size_t k = 0; k < plen; k++) {
                unsigned char c = (unsigned char)piece[k];
                if (c == '\n')
                    fputs("\\n", stdout);
                else if (c == '\t')
                    fputs("\\t", stdout);
                else if (c == '\'' || c == '\\')
                    printf("\\%c", c);
                else if (c < 0x20 || c == 0x7f)
                    printf("\\x%02x", c);
                else
                    putchar(c);
            }
            printf("'\n");
        }
        printf("%zu tokens (%s, pre-tokenizer %s)\n", n, wgml_vocab_kind_of(v) == WGML_VOCAB_SPM ? "spm" : "bpe",
               wgml_vocab_pre(v));
    }
    rc = 0;
out:
    free(piece);
    free(ids);
    free(text);
    wgml_vocab_free(v);
    return rc;
}
