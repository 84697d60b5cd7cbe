/* test_exit_codes.c — one exit code per kind of failure, whichever command
 * meets it (core/exit_codes.h): a missing file is 74 from every command that
 * reads one, a value out of its range is 2, malformed input is 65; and
 * `glue --help` lists the codes. Each case is a real `glue` run on tiny
 * files in a scratch folder. */
#include "tests/cli_fixture.h"
#include "tests/test.h"

#include <limits.h>
#include <stdlib.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *args;   /* after "glue"; %V is the shared vocabulary */
    const char *says;   /* a piece of the message */
} ExitCase;

/* Runs each case in f and checks its exit status is want. */
static void exit_cases(const CliFixture *f, const ExitCase *cases, int n, int want) {
    /* absolute: the commands run inside the fixture's folder, not the repository */
    char shared[PATH_MAX], vocab[PATH_MAX + 64];
    if (!realpath(test_shared_dir(), shared)) snprintf(shared, sizeof shared, "%s", test_shared_dir());
    snprintf(vocab, sizeof vocab, "%s/models/vocab/bert-base-uncased-vocab.txt", shared);
    for (int i = 0; i < n; i++) {
        char args[8192];
        const char *v = strstr(cases[i].args, "%V");
        if (v) snprintf(args, sizeof args, "%.*s%s%s", (int)(v - cases[i].args), cases[i].args, vocab, v + 2);
        else snprintf(args, sizeof args, "%s", cases[i].args);
        int st = -1;
        char *out = cli_fixture_glue(f, args, &st);
        CHECK_MSG(st == want && strstr(out, cases[i].says), "glue %s: exit %d (want %d), wanted '%s' in: %.600s",
                  args, st, want, cases[i].says, out);
        free(out);
    }
}

/* A folder with a tiny two-class dataset, an SST-2 dev split, a BLEU pair. */
static int exit_fixture(CliFixture *f) {
    if (cli_fixture_open(f) != 0) return -1;
    int rc = cli_fixture_two_class(f, "tr.tsv", 12);
    rc |= cli_fixture_write(f, "bad.tsv", "text\tlabel\nfine words\tpos\nother words\tneg\nthird\tpos\textra\n", -1);
    rc |= cli_fixture_write(f, "glue/SST-2/dev.tsv", "sentence\tlabel\ngood film \t1\nbad film \t0\n", -1);
    rc |= cli_fixture_write(f, "pred_bad.tsv", "index\tprediction\n0\t1\n1\tnot-a-label\n", -1);
    rc |= cli_fixture_write(f, "hyp_bad.txt", "a man \xff rides\n", -1);
    rc |= cli_fixture_write(f, "ref.txt", "a man rides\n", -1);
    rc |= cli_fixture_write(f, "corpus.txt", "a b c d\n", -1);
    rc |= cli_fixture_write(f, "empty.txt", "", -1);
    return rc;
}

TEST(exit_code_missing_file_is_74_everywhere) {
    CliFixture f;
    if (exit_fixture(&f) != 0) { cli_fixture_close(&f); return; }
    static const ExitCase MISSING[] = {
        {"score sst2 nowhere.tsv", "nowhere.tsv"},
        {"bleu nowhere.txt ref.txt", "nowhere.txt"},
        {"finetune --train nowhere.tsv --dev tr.tsv --model fasttext", "nowhere.tsv"},
        {"finetune cola --model fasttext", "CoLA/train.tsv"},
        {"predict sst2 --run nowhere 'a text'", "nowhere"},
        {"eval sst2 --run nowhere", "nowhere"},
        {"eval sst2 --model fasttext", "does not exist"},
        {"tokenize --vocab nowhere.txt hello", "nowhere.txt"},
        {"translate --model nowhere hello", "nowhere"},
        {"vocab train --corpus nowhere.txt --size 50 --out v.txt", "nowhere.txt"},
        {"vectors train --corpus nowhere.txt --out v.vec", "nowhere.txt"},
        /* outside the repository the shipped encoder is missing: refused, where
         * it trained from random weights without a word */
        {"finetune --train tr.tsv --dev tr.tsv --model bert --set vocab=%V --out enc", "the shipped encoder"},
        /* a file to write that is a folder: said before anything is written
         * (it was "Is a directory" after the whole page, with a hint of disk space) */
        {"report --out glue", "glue: it is a folder"},
        {"vocab train --corpus corpus.txt --size 50 --out glue", "glue: it is a folder"},
    };
    exit_cases(&f, MISSING, (int)(sizeof MISSING / sizeof MISSING[0]), 74);
    CHECK_MSG(!cli_fixture_exists(&f, "enc"), "the refused fine-tune wrote its run folder");
    CHECK_MSG(!cli_fixture_exists(&f, "glue/.report.html.tmp") , "a temporary left");
    cli_fixture_close(&f);
}

/* Output that does not reach standard output's file (a full disk: /dev/full):
 * 74 and a message, where every command said 0 (`glue predict --json >
 * out.jsonl` lost the predictions). Stderr goes to a file, then is shown. */
TEST(exit_code_output_lost_is_74) {
    if (access("/dev/full", W_OK) != 0) {
        test_skip("no /dev/full");
        return;
    }
    CliFixture f;
    if (exit_fixture(&f) != 0) { cli_fixture_close(&f); return; }
    static const ExitCase LOST[] = {
        {"tasks >/dev/full 2>e.txt; s=$?; cat e.txt; exit $s", "cannot write the output (standard output): No space"},
        {"tokenize --vocab %V 'a few words' >/dev/full 2>e.txt; s=$?; cat e.txt; exit $s", "part of it is lost"},
        {"bleu ref.txt ref.txt >/dev/full 2>e.txt; s=$?; cat e.txt; exit $s", "standard output"},
    };
    exit_cases(&f, LOST, (int)(sizeof LOST / sizeof LOST[0]), 74);
    cli_fixture_close(&f);
}

TEST(exit_code_out_of_range_is_2_everywhere) {
    CliFixture f;
    if (exit_fixture(&f) != 0) { cli_fixture_close(&f); return; }
    static const ExitCase RANGE[] = {
        {"tokenize --vocab %V --max-len -1 hello", "--max-len"},
        /* a model's own setting (read when the model is made) and the trainer's */
        {"finetune --train tr.tsv --dev tr.tsv --model fasttext --set dim=0 --out r1", "dim"},
        {"finetune --train tr.tsv --dev tr.tsv --model textcnn --set filters=0 --out r2", "filters"},
        {"finetune --train tr.tsv --dev tr.tsv --model fasttext --epochs 0 --out r3", "epochs"},
        {"translate --beam 0 hello", "--beam"},
        /* -1 and NaN given: decoded with the run's beam and alpha, exit 0 */
        {"translate --beam -1 hello", "--beam must be in [1, 64], got -1"},
        {"translate eval --alpha nan", "--alpha must be in [0, 100], got nan"},
        {"pretrain --set steps=-1 --out r4", "steps"},
        /* compare trained into <model>-seed-1 as seed 2^64-1; with --seeds, --seed was dropped silently */
        {"compare wnli --models fasttext --seed -1", "--seed -1: a seed is a whole number >= 0"},
        {"compare wnli --models fasttext --seed 1 --seeds 1,2", "--seeds names every seed to run"},
        {"vectors train --corpus corpus.txt --out v.vec --dim 0", "--dim"},
        /* a pool of 100,000 threads crashed the OpenMP runtime (SIGSEGV) */
        {"finetune --train tr.tsv --dev tr.tsv --model fasttext --threads 100000 --out r5", "--threads 100000"},
        {"translate --threads 2000 hello", "--threads 2000"},
    };
    exit_cases(&f, RANGE, (int)(sizeof RANGE / sizeof RANGE[0]), 2);
    cli_fixture_close(&f);
}

/* A repeatable option given more often than the command keeps (64 --set for
 * finetune, 16 for compare, 8 for ensemble, 16 --run) is a usage error naming
 * the limit, before anything is written; the extra ones used to be dropped
 * silently, or written past the end of compare's array. */
TEST(exit_code_too_many_repeats_is_2) {
    CliFixture f;
    if (exit_fixture(&f) != 0) { cli_fixture_close(&f); return; }
    static const struct { const char *head, *repeat, *says; int times; } CASES[] = {
        {"finetune --train tr.tsv --dev tr.tsv --model fasttext --out r1", " --set epochs=1", "at most 64 --set", 65},
        {"compare all --models fasttext", " --set epochs=1", "at most 16 --set", 17},
        {"protocol --model fasttext --out r2", " --set epochs=1", "at most 16 --set", 17},
        {"boost rte --model fasttext --rounds 2 --out r3", " --set epochs=1", "at most 16 --set", 17},
        {"ensemble rte --runs r1,r2", " --set combine=probs", "at most 8 --set", 9},
        {"serve", " --run r1", "at most 16 --run", 17},
    };
    for (size_t c = 0; c < sizeof CASES / sizeof CASES[0]; c++) {
        char args[4096];
        int len = snprintf(args, sizeof args, "%s", CASES[c].head);
        for (int i = 0; i < CASES[c].times; i++) len += snprintf(args + len, sizeof args - (size_t)len, "%s", CASES[c].repeat);
        ExitCase one = {args, CASES[c].says};
        exit_cases(&f, &one, 1, 2);
    }
    static const char *const WRITTEN[] = {"r1", "r2", "r3"};
    for (int i = 0; i < 3; i++) CHECK_MSG(!cli_fixture_exists(&f, WRITTEN[i]), "a refused command wrote %s", WRITTEN[i]);
    cli_fixture_close(&f);
}

/* A task or model named twice in a list is a usage error before anything is
 * trained: protocol counted the task twice in its score, compare printed the
 * model's row twice (a --seeds or finetune multi's --tasks repeat was refused
 * already). */
TEST(exit_code_name_given_twice_is_2) {
    CliFixture f;
    if (exit_fixture(&f) != 0) { cli_fixture_close(&f); return; }
    static const ExitCase TWICE[] = {
        {"protocol --model fasttext --tasks wnli,rte,wnli --seeds 1 --out r1", "--tasks: 'wnli' is given twice"},
        {"compare wnli --models fasttext,textcnn,fasttext", "--models: 'fasttext' is given twice"},
        {"ensemble wnli --models textcnn,textcnn --seeds 1 --out r2", "--models: 'textcnn' is given twice"},
        {"pretrain screen r3 --tasks cola,cola", "--tasks: 'cola' is given twice"},
    };
    exit_cases(&f, TWICE, (int)(sizeof TWICE / sizeof TWICE[0]), 2);
    static const char *const WRITTEN[] = {"r1", "r2"};
    for (int i = 0; i < 2; i++) CHECK_MSG(!cli_fixture_exists(&f, WRITTEN[i]), "a refused command wrote %s", WRITTEN[i]);
    cli_fixture_close(&f);
}

/* A file (a run's model.ckpt, a TSV) given as --run: one message and a usage
 * error. It was read as a folder: "tr.tsv/results.json: Not a directory"
 * (twice), then "train it first" and exit 74, or predict took the text for
 * the task's name. */
TEST(exit_code_run_is_a_file_is_2) {
    CliFixture f;
    if (exit_fixture(&f) != 0) { cli_fixture_close(&f); return; }
    static const char *const AS_RUN[] = {"eval --run tr.tsv", "eval sst2 --run tr.tsv", "predict --run tr.tsv 'a day'"};
    for (int i = 0; i < 3; i++) {
        int st = -1;
        char *out = cli_fixture_glue(&f, AS_RUN[i], &st);
        const char *said = strstr(out, "--run tr.tsv is a file, not a run directory");
        CHECK_MSG(st == 2 && said && !strstr(out, "Not a directory") && !strstr(said, "error:"),
                  "glue %s: exit %d: %s", AS_RUN[i], st, out);
        free(out);
    }
    cli_fixture_close(&f);
}

/* A run whose results.json is damaged is refused (65) by eval and predict:
 * they printed the error and went on from the checkpoint, exit 0. */
TEST(exit_code_damaged_run_results_is_65) {
    CliFixture f;
    if (exit_fixture(&f) != 0) { cli_fixture_close(&f); return; }
    int st = -1;
    CHECK(cli_fixture_write(&f, "glue/SST-2/train.tsv", "sentence\tlabel\ngood film \t1\nbad film \t0\n", -1) == 0);
    char *out = cli_fixture_glue(&f, "finetune sst2 --model fasttext --epochs 1 --set bucket=1000 --out dmg", &st);
    CHECK_MSG(st == 0, "finetune: exit %d: %s", st, out);
    free(out);
    CHECK(cli_fixture_write(&f, "dmg/results.json", "{\"task\": \"sst2\",\n", -1) == 0);
    static const ExitCase DAMAGED[] = {
        {"eval --run dmg", "dmg/results.json:1: malformed JSON"},
        {"predict --run dmg 'a day'", "dmg/results.json:1: malformed JSON"},
    };
    exit_cases(&f, DAMAGED, 2, 65);
    cli_fixture_close(&f);
}

TEST(exit_code_bad_data_is_65_everywhere) {
    CliFixture f;
    if (exit_fixture(&f) != 0) { cli_fixture_close(&f); return; }
    static const ExitCase DATA[] = {
        {"score sst2 pred_bad.tsv", "not-a-label"},
        {"bleu hyp_bad.txt ref.txt", "invalid UTF-8"},
        {"bleu empty.txt empty.txt", "empty.txt: no lines: nothing to score"},   /* was BLEU 0.00, exit 0 */
        {"predict sst2 \"$(printf 'a\\377b')\"", "invalid UTF-8"},
        {"finetune --train bad.tsv --dev tr.tsv --model fasttext --strict --out r5", "bad.tsv:4"},
        {"tokenize --vocab %V --pair < corpus.txt", "no TAB"},
        /* no word kept at a documented minimum count: fastText said exit 1, the word models 65 */
        {"finetune --train tr.tsv --dev tr.tsv --model fasttext --set minCount=1000000000 --out r6", "empty vocabulary"},
        {"finetune --train tr.tsv --dev tr.tsv --model textcnn --set min_count=1000000000 --out r7", "no word occurs"},
    };
    exit_cases(&f, DATA, (int)(sizeof DATA / sizeof DATA[0]), 65);
    cli_fixture_close(&f);
}

/* Malformed contents met by the readers that reported them as plain
 * failures (exit 1): a .vec file (glue vectors eval, and --set vectors= of a
 * word model), an analogy file, a pretraining corpus without text, a parallel
 * corpus whose sides differ in length, a Hugging Face config.json of another
 * model; a --config file with more after its JSON object (read as the object alone). */
TEST(exit_code_malformed_vectors_corpus_config_is_65) {
    CliFixture f;
    if (exit_fixture(&f) != 0) { cli_fixture_close(&f); return; }
    int rc = cli_fixture_write(&f, "bad.vec", "2 3\nfoo 1 2\n", -1);
    rc |= cli_fixture_write(&f, "ok.vec", "foo 1 2 3\nbar 1 2 3\nbaz 3 2 1\nqux 1 1 1\n", -1);
    rc |= cli_fixture_write(&f, "an.txt", "foo bar baz qux\n", -1);
    rc |= cli_fixture_write(&f, "blank.txt", "\n   \n\n", -1);
    rc |= cli_fixture_write(&f, "mt/train.en", "a man rides\na dog runs\n", -1);
    rc |= cli_fixture_write(&f, "mt/train.de", "ein mann\n", -1);
    rc |= cli_fixture_write(&f, "hf/config.json", "{\"model_type\": \"gpt2\"}\n", -1);
    rc |= cli_fixture_write(&f, "hf/model.safetensors", "x", -1);
    rc |= cli_fixture_write(&f, "trail.json", "{\"epochs\": 1}\n{\"epochs\": 2}\n", -1);   /* a value after the object */
    CHECK(rc == 0);
    static const ExitCase DATA[] = {
        {"vectors eval bad.vec", "bad.vec:2"},
        {"vectors eval ok.vec --analogies an.txt", "before any \": category\""},
        {"finetune --train tr.tsv --dev tr.tsv --model textcnn --set embedding=non-static --set vectors=bad.vec "
         "--out r6", "bad.vec:2"},
        {"pretrain --corpus blank.txt --set vocab=%V --set steps=1 --cache cache --out r7", "no text"},
        {"translate train --set data_dir=mt --set vocab=%V --out r8", "different numbers of lines"},
        {"finetune --train tr.tsv --dev tr.tsv --model bert --set init=hf --out r9", "not \"bert\""},
        {"finetune --train tr.tsv --dev tr.tsv --model textcnn --config trail.json --out r10", "trail.json:2: malformed"},
    };
    exit_cases(&f, DATA, (int)(sizeof DATA / sizeof DATA[0]), 65);
    cli_fixture_close(&f);
}

TEST(exit_code_help_lists_the_codes) {
    int st = -1;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s --help", test_glue_bin());
    char *out = test_run(cmd, &st);
    CHECK_MSG(st == 0 && strstr(out, "exit codes:") && strstr(out, "  2    usage") && strstr(out, "  65   data") &&
                  strstr(out, "  74   I/O") && strstr(out, "  130  interrupted"),
              "%s", out);
    free(out);
}
