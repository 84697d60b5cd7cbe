/* test_truncation.c — a text cut to the model's max_len is counted and said,
 * one line per encoded split ("4 of 8 rows of NAME train truncated to
 * max_len 4 words (the longest had 9)"), by finetune (train and dev), eval,
 * predict, translate and tokenize --max-len; nothing is said when no text is
 * cut. The files hold exactly known numbers of long rows. */
#include "tests/cli_fixture.h"
#include "tests/test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* n rows "text<TAB>label", every other one 9 words long, the rest 2. */
static int trunc_file(const CliFixture *f, const char *name, int n) {
    char text[4096] = "text\tlabel\n";
    for (int i = 0; i < n; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s\t%s\n",
                 i % 2 ? "good fine nice great good fine nice great day" : "bad day", i % 4 < 2 ? "pos" : "neg");
    return cli_fixture_write(f, name, text, -1);
}

/* glue args: exit 0 and every one of says[0..n) in the output. */
static void trunc_says(const CliFixture *f, const char *args, const char *const *says, int n) {
    int st = -1;
    char *out = cli_fixture_glue(f, args, &st);
    int all = st == 0;
    for (int k = 0; k < n; k++) all = all && strstr(out, says[k]);
    CHECK_MSG(all, "glue %s: exit %d, wanted '%s'%s: %.700s", args, st, says[0], n > 1 ? " ..." : "", out);
    free(out);
}

static void trunc_silent(const CliFixture *f, const char *args) {
    int st = -1;
    char *out = cli_fixture_glue(f, args, &st);
    CHECK_MSG(st == 0 && !strstr(out, "truncated"), "glue %s: exit %d: %.500s", args, st, out);
    free(out);
}

TEST(truncation_counted_word_models) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    if (trunc_file(&f, "tr.tsv", 8) || trunc_file(&f, "dev.tsv", 6)) { cli_fixture_close(&f); return; }
    static const char *const MODELS[] = {"textcnn", "bilstm", "han"};   /* han: its own encoding (sentences) */
    for (int m = 0; m < 3; m++) {
        char args[512];
        snprintf(args, sizeof args, "finetune --train tr.tsv --dev dev.tsv --model %s --max-len 4 --epochs 1 "
                 "--threads 1 --out %s", MODELS[m], MODELS[m]);
        const char *const fit[] = {"4 of 8 rows of tr train truncated to max_len 4 words (the longest had 9)",
                                   "3 of 6 rows of tr dev truncated to max_len 4 words"};
        trunc_says(&f, args, fit, 2);
        snprintf(args, sizeof args, "eval --run %s --model %s", MODELS[m], MODELS[m]);
        trunc_says(&f, args, fit + 1, 1);
        snprintf(args, sizeof args, "predict --run %s --model %s 'one two three four five'", MODELS[m], MODELS[m]);
        const char *const one[] = {"1 of 1 rows of tr input truncated to max_len 4 words (the longest had 5)"};
        trunc_says(&f, args, one, 1);
        snprintf(args, sizeof args, "predict --run %s --model %s 'one two three four'", MODELS[m], MODELS[m]);
        trunc_silent(&f, args);
    }
    trunc_silent(&f, "finetune --train tr.tsv --dev dev.tsv --model textcnn --epochs 1 --threads 1 --out whole");
    cli_fixture_close(&f);
}

TEST(truncation_counted_bert_tokenize_translate) {
    CliFixture f;
    if (cli_fixture_open(&f) != 0) return;
    if (trunc_file(&f, "tr.tsv", 8) || trunc_file(&f, "dev.tsv", 6)) { cli_fixture_close(&f); return; }
    char vocab[512], args[1024];
    snprintf(vocab, sizeof vocab, "%s/models/vocab/bert-base-uncased-vocab.txt", test_shared_dir());
    /* [CLS] + 9 words + [SEP] = 11 tokens against max_len 6 */
    snprintf(args, sizeof args, "finetune --train tr.tsv --dev dev.tsv --model bert --init none --set vocab=%s --max-len 6 "
             "--epochs 1 --threads 1 --out b", vocab);
    const char *const fit[] = {"4 of 8 rows of tr train truncated to max_len 6 tokens (the longest had 11)",
                               "3 of 6 rows of tr dev truncated to max_len 6 tokens"};
    trunc_says(&f, args, fit, 2);
    snprintf(args, sizeof args, "tokenize --vocab %s --max-len 4 'a b c d e' x 'y z'", vocab);
    const char *const tok[] = {"1 of 3 inputs truncated to max_len 4 tokens (the longest had 7)"};
    trunc_says(&f, args, tok, 1);
    cli_fixture_close(&f);
    /* The shipped translation model (run from the repository): 127 source pieces at most. */
    char text[4096] = "";
    for (int i = 0; i < 40; i++) strcat(text, "a man rides a red bike ");
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s translate --model models/translate-en-de-multi30k --beam 1 '%s' 'a dog runs' 2>&1",
             test_glue_bin(), text);
    int st = -1;
    char *out = test_run(cmd, &st);
    CHECK_MSG(st == 0 && strstr(out, "1 of 2 texts truncated to max_len 127 pieces"), "translate: exit %d: %.500s", st,
              out);
    free(out);
}
