/* test_vocab_train.c — WordPiece vocabulary training: exact merges on tiny
 * corpora, identical output to a naive Python reference that recounts every pair
 * before each merge (tests/tokenizer_reference.py bpe), the properties a trained
 * vocabulary must have (specials, every character, no [UNK] on its own training
 * text, frequent words whole), `glue vocab train`, and Multi30k speed. */
#include "core/common.h"
#include "core/files.h"
#include "core/lines.h"
#include "tests/scratch.h"
#include "tests/test.h"
#include "text/tokenizer.h"
#include "text/vocab.h"
#include "text/wordpiece_train.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Train on the lines of some files (NULL-terminated list). */
static WordpieceTrainer *train_files(const char *const *paths, int size, long min_count) {
    WordpieceTrainer *tr = wordpiece_trainer_create();
    for (int i = 0; paths[i]; i++) {
        LineReader r;
        if (!CHECK_MSG(lines_open(&r, paths[i]) == LINES_OK, "%s", r.err)) { lines_close(&r); continue; }
        char *line;
        size_t len;
        while (lines_next(&r, &line, &len) == 1) wordpiece_trainer_add_text(tr, line, len);
        lines_close(&r);
    }
    wordpiece_trainer_train(tr, size, min_count);
    return tr;
}

static WordpieceTrainer *train_text(const char *text, int size, long min_count) {
    WordpieceTrainer *tr = wordpiece_trainer_create();
    wordpiece_trainer_add_text(tr, text, strlen(text));
    wordpiece_trainer_train(tr, size, min_count);
    return tr;
}

/* The trained tokens joined by spaces, for exact comparisons. */
static char *joined(const WordpieceTrainer *tr) {
    static char buf[4096];   /* test-local scratch, overwritten by each call */
    size_t n = 0;
    for (int i = 0; i < wordpiece_trainer_num_tokens(tr) && n + 64 < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? " " : "", wordpiece_trainer_token(tr, i));
    return buf;
}

TEST(vocab_train_tiny_exact) {
    /* ab x3, abc x1: (a,##b)=4 merges first, then (ab,##c)=1 only if min_count <= 1. */
    WordpieceTrainer *tr = train_text("AB ab ab abc", 100, 1);
    CHECK_MSG(strcmp(joined(tr), "[PAD] [UNK] [CLS] [SEP] [MASK] a ##b ##c ab abc") == 0, "got %s", joined(tr));
    CHECK_EQ_INT(wordpiece_trainer_num_merges(tr), 2);
    CHECK_EQ_INT(wordpiece_trainer_total_words(tr), 4);
    CHECK_EQ_INT(wordpiece_trainer_distinct_words(tr), 2);
    wordpiece_trainer_free(tr);
    tr = train_text("ab ab ab abc", 100, 2);
    CHECK_MSG(strcmp(joined(tr), "[PAD] [UNK] [CLS] [SEP] [MASK] a ##b ##c ab") == 0, "got %s", joined(tr));
    wordpiece_trainer_free(tr);
    /* Ties go to the pair of smaller ids: (x,##y) before (z,##w); the size stops it. */
    tr = train_text("zw xy zw xy", 10, 1);
    CHECK_MSG(strcmp(joined(tr), "[PAD] [UNK] [CLS] [SEP] [MASK] x z ##w ##y xy") == 0, "got %s", joined(tr));
    wordpiece_trainer_free(tr);
    /* Overlapping pairs merge left to right: "aaa" -> aa ##a; punctuation splits words. */
    tr = train_text("aaa aaa, aaa!", 100, 1);
    CHECK_MSG(strcmp(joined(tr), "[PAD] [UNK] [CLS] [SEP] [MASK] ! , a ##a aa aaa") == 0, "got %s", joined(tr));
    wordpiece_trainer_free(tr);
    /* Too small a size keeps all characters anyway. */
    tr = train_text("abc", 3, 1);
    CHECK_EQ_INT(wordpiece_trainer_num_tokens(tr), 8);
    wordpiece_trainer_free(tr);
}

TEST(vocab_train_matches_naive_python_reference) {
    if (access("/usr/bin/python3", X_OK) != 0) { test_skip("no /usr/bin/python3"); return; }
    char en[1024], de[1024], cmd[4096];
    snprintf(en, sizeof en, "%s/data/mt/multi30k/raw/val.en.gz", test_shared_dir());
    snprintf(de, sizeof de, "%s/data/mt/multi30k/raw/val.de.gz", test_shared_dir());
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/tokenizer_reference.py bpe 400 2 %s %s", en, de);
    int status;
    char *want = test_run(cmd, &status);
    CHECK_EQ_INT(status, 0);
    const char *paths[] = {en, de, NULL};
    WordpieceTrainer *tr = train_files(paths, 400, 2);
    int n = wordpiece_trainer_num_tokens(tr), same = 0, lines = 0;
    for (char *l = want, *next; *l; l = next, lines++) {
        next = strchr(l, '\n');
        if (!next) break;
        *next++ = '\0';
        if (lines < n && strcmp(l, wordpiece_trainer_token(tr, lines)) == 0) same++;
        else if (lines - same < 5) printf("  token %d: python '%s', ours '%s'\n", lines, l, lines < n ? wordpiece_trainer_token(tr, lines) : "-");
    }
    printf("  Multi30k val en+de, 400 tokens: %d/%d equal to the naive reference (%d merges)\n", same, lines,
           wordpiece_trainer_num_merges(tr));
    CHECK_EQ_INT(n, 400);
    CHECK_EQ_INT(lines, n);
    CHECK_EQ_INT(same, n);
    free(want);
    wordpiece_trainer_free(tr);
}

/* A vocabulary trained on text must spell that text without [UNK]. */
TEST(vocab_train_properties_on_its_own_corpus) {
    char en[1024];
    snprintf(en, sizeof en, "%s/data/mt/multi30k/raw/val.en.gz", test_shared_dir());
    const char *paths[] = {en, NULL};
    WordpieceTrainer *tr = train_files(paths, 1000, 2);
    int n = wordpiece_trainer_num_tokens(tr);
    CHECK_EQ_INT(n, 1000);
    const char **toks = malloc(sizeof(char *) * (size_t)n);
    for (int i = 0; i < n; i++) toks[i] = wordpiece_trainer_token(tr, i);
    Vocab *v = vocab_from_tokens(toks, n);
    const VocabSpecials *sp = vocab_specials(v);
    CHECK(sp->pad == 0 && sp->unk == 1 && sp->cls == 2 && sp->sep == 3 && sp->mask == 4);
    Tokenizer *tok = tokenizer_create(v);
    BasicTokenizer bt;
    basic_tokenizer_init(&bt, 1);
    LineReader r;
    lines_open(&r, en);
    char *line;
    size_t len;
    long tokens = 0, unk = 0, missing_chars = 0;
    int ids[1024];
    while (lines_next(&r, &line, &len) == 1) {
        int T = tokenizer_ids(tok, line, len, ids, NULL, 1024);
        for (int i = 0; i < T && i < 1024; i++) unk += ids[i] == sp->unk;
        tokens += T;
        /* every character: word-initial as itself, inside a word as "##c" */
        int nw = basic_tokenize(&bt, line, len);
        for (int w = 0; w < nw; w++) {
            const char *s = basic_word(&bt, w);
            for (size_t pos = 0; s[pos];) {
                size_t at = pos++;
                while ((s[pos] & 0xC0) == 0x80) pos++;
                missing_chars += vocab_id_piece(v, s + at, pos - at, at > 0) < 0;
            }
        }
    }
    lines_close(&r);
    printf("  Multi30k val.en with its own 1000-token vocabulary: %ld tokens, %ld [UNK]\n", tokens, unk);
    CHECK(tokens > 10000);
    CHECK_EQ_INT(unk, 0);
    CHECK_EQ_INT(missing_chars, 0);
    /* Frequent words are whole tokens. */
    static const char *const frequent[] = {"the", "man", "woman", "playing", "street"};
    for (int i = 0; i < 5; i++) CHECK_MSG(vocab_id(v, frequent[i]) >= 0, "'%s' is not one token", frequent[i]);
    basic_tokenizer_free(&bt);
    tokenizer_free(tok);
    vocab_free(v);
    free(toks);
    wordpiece_trainer_free(tr);
}

TEST(cli_vocab_train) {
    char out[SCRATCH_PATH_MAX], cmd[4096], data[1024];
    int fd = scratch_file("vocab_train", out, sizeof out), status;
    if (!CHECK(fd >= 0)) return;
    close(fd);
    snprintf(data, sizeof data, "%s/data/mt/multi30k/raw", test_shared_dir());
    snprintf(cmd, sizeof cmd, "%s vocab train --corpus %s/val.en.gz %s/val.de.gz --size 600 --out %s --json",
             test_glue_bin(), data, data, out);
    char *res = test_run(cmd, &status);
    CHECK_EQ_INT(status, 0);
    cJSON *o = cJSON_Parse(res);
    CHECK_MSG(o != NULL, "not JSON: %s", res);
    const cJSON *vs = cJSON_GetObjectItemCaseSensitive(o, "vocab_size"), *ln = cJSON_GetObjectItemCaseSensitive(o, "lines");
    CHECK(cJSON_IsNumber(vs) && vs->valueint == 600);
    CHECK(cJSON_IsNumber(ln) && ln->valueint == 2028);
    cJSON_Delete(o);
    free(res);
    Vocab *v = vocab_load(out);
    CHECK(v != NULL && vocab_size(v) == 600 && vocab_id(v, "[MASK]") == 4);
    vocab_free(v);
    snprintf(cmd, sizeof cmd, "%s tokenize --vocab %s 'The man'", test_glue_bin(), out);
    res = test_run(cmd, &status);
    CHECK_EQ_INT(status, 0);
    CHECK_MSG(strncmp(res, "the man\t", 8) == 0, "got '%s'", res);
    free(res);
    remove(out);
    /* A folder of our own for the refused run's --out: it must stay empty. */
    char nw_dir[SCRATCH_PATH_MAX], nw_out[SCRATCH_PATH_MAX + 32], nw_args[SCRATCH_PATH_MAX + 128];
    if (!CHECK(scratch_dir("vocab_no_words", nw_dir, sizeof nw_dir))) return;
    snprintf(nw_out, sizeof nw_out, "%s/no_words.txt", nw_dir);
    snprintf(nw_args, sizeof nw_args, "train --corpus /dev/null --size 10 --out %s", nw_out);
    struct { const char *args; int status; const char *msg; } bad[] = {
        {"train --corpus /nonexistent.txt --size 10 --out /nonexistent-dir/x", 74, "/nonexistent.txt"},
        {"train --corpus x --out /nonexistent-dir/x", 2, "--size"},
        {"train --corpus x --size 10", 2, "--out"},
        {"fit --corpus x --size 10 --out /nonexistent-dir/x", 2, "train"},
        {"train --corpus x --size 10 --out /nonexistent-dir/x --min-count 0", 2, "--min-count"},
        {"train --corpus x --size 10 --out /nonexistent-dir/x --bogus", 2, "unknown option"},
        /* given, but out of range: not "--size N ... is required" */
        {"train --corpus x --size 99999999 --out /nonexistent-dir/x", 2, "--size must be from 1 to 10000000, got 99999999"},
        /* no words: a vocabulary of the specials alone was written, exit 0 */
        {nw_args, 65, "no words in /dev/null"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(cmd, sizeof cmd, "%s vocab %s 2>&1", test_glue_bin(), bad[i].args);
        res = test_run(cmd, &status);
        CHECK_MSG(status == bad[i].status && strstr(res, bad[i].msg), "'%s': status %d, output '%s'", bad[i].args, status, res);
        free(res);
    }
    CHECK_MSG(access(nw_out, F_OK) != 0, "a refused vocab train wrote its --out");
    /* A vocabulary already there is not written over unless asked (a typo in --out replaced it without a word):
     * refused before any work, the file as it was; --overwrite replaces it. An empty file holds nothing: written. */
    FILE *keep = fopen(nw_out, "w");
    if (keep) fputs("mine\n", keep), fclose(keep);
    snprintf(cmd, sizeof cmd, "%s vocab train --corpus %s/val.en.gz --size 200 --out %s 2>&1", test_glue_bin(), data,
             nw_out);
    res = test_run(cmd, &status);
    CHECK_MSG(status == 2 && strstr(res, "exists: not written over") && strstr(res, "--overwrite"), "%d: %s", status,
              res);
    free(res);
    char *kept = file_read(nw_out, NULL);
    CHECK_MSG(kept && !strcmp(kept, "mine\n"), "the refusal changed the file: %s", kept ? kept : "(gone)");
    free(kept);
    snprintf(cmd, sizeof cmd, "%s vocab train --corpus %s/val.en.gz --size 200 --out %s --overwrite", test_glue_bin(),
             data, nw_out);
    free(test_run(cmd, &status));
    v = vocab_load(nw_out);
    CHECK_MSG(status == 0 && v && vocab_size(v) == 200, "--overwrite: exit %d", status);
    vocab_free(v);
    remove(nw_out);
    rmdir(nw_dir);
}

/* Multi30k train, English and German (58k lines): printed, loosely bounded. */
TEST(vocab_train_speed_multi30k) {
    char en[1024], de[1024];
    snprintf(en, sizeof en, "%s/data/mt/multi30k/raw/train.en.gz", test_shared_dir());
    snprintf(de, sizeof de, "%s/data/mt/multi30k/raw/train.de.gz", test_shared_dir());
    if (access(en, R_OK) != 0) { test_skip("Multi30k train not found"); return; }
    const char *paths[] = {en, de, NULL};
    double t0 = now_seconds();
    WordpieceTrainer *tr = train_files(paths, 8000, 2);
    double secs = now_seconds() - t0;
    printf("  Multi30k train en+de: %ld words, %d distinct, 8000 tokens (%d merges) in %.2f s\n",
           wordpiece_trainer_total_words(tr), wordpiece_trainer_distinct_words(tr), wordpiece_trainer_num_merges(tr), secs);
    CHECK_EQ_INT(wordpiece_trainer_num_tokens(tr), 8000);
    CHECK_MSG(secs < 10.0, "training took %.1f s", secs);
    wordpiece_trainer_free(tr);
}
