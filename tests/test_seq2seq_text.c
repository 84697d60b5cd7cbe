/* test_seq2seq_text.c — the translation tokenizer (text/subword.h): a cased,
 * join-marking WordPiece vocabulary trained on a small corpus keeps case and
 * accents, spells punctuation attached to a word as "##" pieces, and
 * decode(encode(s)) gives s back (whitespace normalised) — also for text the
 * vocabulary was not trained on, as long as its characters are covered; the
 * uncased default of the trainer is unchanged; `glue vocab train --cased
 * --mark-joins` writes such a vocabulary. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/subword.h"
#include "text/vocab.h"
#include "text/wordpiece_train.h"
#include "tests/scratch.h"
#include "tests/test.h"

static const char *const CORPUS[] = {
    "Zwei junge weiße Männer sind im Freien in der Nähe vieler Büsche.",
    "Ein Mann in einem blauen T-Shirt steht auf einer Leiter und putzt ein Fenster.",
    "Two young, White males are outside near many bushes.",
    "A man in a blue shirt is standing on a ladder (cleaning a window).",
    "\"Hello,\" said the man's dog: «Wau!»",
};
enum { NCORPUS = sizeof CORPUS / sizeof CORPUS[0] };

static Vocab *train_vocab(int cased, int joins, int size) {
    WordpieceTrainer *tr = wordpiece_trainer_create();
    wordpiece_trainer_set_options(tr, cased, joins);
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < NCORPUS; i++) wordpiece_trainer_add_text(tr, CORPUS[i], strlen(CORPUS[i]));
    int n = wordpiece_trainer_train(tr, size, 2);
    const char **toks = malloc(sizeof(char *) * (size_t)n);
    for (int i = 0; i < n; i++) toks[i] = wordpiece_trainer_token(tr, i);
    Vocab *v = vocab_from_tokens(toks, n);
    free(toks);
    wordpiece_trainer_free(tr);
    return v;
}

static char *roundtrip(SubwordTokenizer *t, const char *s, int *n_out) {
    int ids[512];
    int n = subword_encode(t, s, strlen(s), ids, 512);
    CHECK(n <= 512);
    if (n_out) *n_out = n;
    return subword_decode(t->vocab, ids, n);
}

TEST(seq2seq_subword_roundtrip) {
    Vocab *v = train_vocab(1, 1, 400);
    SubwordTokenizer *t = subword_create(v);
    CHECK(t != NULL);
    if (!t) { vocab_free(v); return; }
    /* Cased, accents kept, joined punctuation as continuations. */
    CHECK(vocab_id(v, "Männer") >= 0 || vocab_id(v, "M") >= 0);
    CHECK(vocab_id(v, "##.") >= 0);
    CHECK(vocab_id(v, "##ä") >= 0);
    for (int i = 0; i < NCORPUS; i++) {
        char *back = roundtrip(t, CORPUS[i], NULL);
        CHECK_MSG(strcmp(back, CORPUS[i]) == 0, "round trip:\n  %s\n  %s", CORPUS[i], back);
        free(back);
    }
    /* Unseen words of seen characters; whitespace is normalised. */
    const char *s = "  Ein  Mann,   der (laut) lacht.\tWeiße T-Shirts!  ";
    char *back = roundtrip(t, s, NULL);
    CHECK_MSG(strcmp(back, "Ein Mann, der (laut) lacht. Weiße T-Shirts!") == 0, "got '%s'", back);
    free(back);
    /* "dog." is two pieces: "dog"-ish and "##.", never a bare "." after a word. */
    int ids[16];
    int n = subword_encode(t, "man.", 4, ids, 16);
    CHECK(n >= 2 && strcmp(vocab_token(v, ids[n - 1]), "##.") == 0);
    /* A character the vocabulary never saw makes its word [UNK], kept visible. */
    back = roundtrip(t, "Ein Ωmega", NULL);
    CHECK_MSG(strcmp(back, "Ein [UNK]") == 0, "got '%s'", back);
    free(back);
    /* Specials are dropped by decode. */
    const VocabSpecials *sp = vocab_specials(v);
    int with_specials[4] = {sp->cls, vocab_id(v, "A"), sp->sep, sp->pad};
    back = subword_decode(v, with_specials, 4);
    CHECK_MSG(strcmp(back, "A") == 0, "got '%s'", back);
    free(back);
    subword_free(t);
    vocab_free(v);
}

TEST(seq2seq_vocab_uncased_default_unchanged) {
    /* Without options the trainer still lower-cases, strips accents and has no
     * "##" punctuation; with --cased alone case stays but punctuation is plain. */
    Vocab *u = train_vocab(0, 0, 300), *c = train_vocab(1, 0, 300);
    CHECK(vocab_id(u, "M") < 0 && vocab_id(u, "m") >= 0);
    CHECK(vocab_id(u, "##ä") < 0 && vocab_id(u, "##a") >= 0);
    CHECK(vocab_id(u, "##.") < 0 && vocab_id(u, ".") >= 0);
    CHECK(vocab_id(c, "M") >= 0 && vocab_id(c, "##ä") >= 0);
    CHECK(vocab_id(c, "##.") < 0 && vocab_id(c, ".") >= 0);
    vocab_free(u);
    vocab_free(c);
}

TEST(seq2seq_vocab_cli_cased_marks_joins) {
    char dir[SCRATCH_PATH_MAX];
    if (!CHECK(scratch_dir("vocab_mt", dir, sizeof dir))) return;
    char corpus[256], out[256], cmd[1024];
    snprintf(corpus, sizeof corpus, "%s/corpus.txt", dir);
    snprintf(out, sizeof out, "%s/vocab.txt", dir);
    FILE *f = fopen(corpus, "w");
    for (int r = 0; r < 3; r++)
        for (int i = 0; i < NCORPUS; i++) fprintf(f, "%s\n", CORPUS[i]);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s vocab train --corpus %s --size 300 --cased --mark-joins --out %s", test_glue_bin(),
             corpus, out);
    int status;
    free(test_run(cmd, &status));
    CHECK_EQ_INT(status, 0);
    Vocab *v = vocab_load(out);
    if (CHECK(v != NULL)) {
        CHECK(vocab_id(v, "##.") >= 0 && vocab_id(v, "M") >= 0 && vocab_id(v, "##ä") >= 0);
        vocab_free(v);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_EQ_INT(system(cmd), 0);
}
