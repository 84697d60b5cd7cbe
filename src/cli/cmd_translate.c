/* cmd_translate.c — `glue translate`: train the English->German transformer on
 * Multi30k, score it with BLEU, and translate text.
 *
 *   glue translate train [--config F] [--set k=v ...] [--out DIR] [--seed S] [--resume] [--overwrite]
 *   glue translate eval [--split test2016|test2017|mscoco|test2018|val] [--beam N] [--alpha A]
 *   glue translate [--beam N] "A man is riding a bike."     (no text: stdin, one per line)
 *
 *   glue translate snapshot RUN_DIR OUT_DIR   (a run's model in half precision, to ship)
 *
 * The model is --model DIR|CKPT, else runs/translate/model.ckpt (root
 * $GLUE_RUNS) when the user trained one, else the shipped model
 * (models/translate-en-de-multi30k, run from the repository).
 * eval prints BLEU as sacreBLEU defines it — detokenised output against the
 * raw references, cased, 13a — and the lower-cased BLEU against the
 * Moses-tokenised lower-cased references of data/mt/multi30k/tok (13a on both
 * sides, so the reference's &quot; escapes match), the number most papers on
 * Multi30k report; it writes the hypotheses next to a model trained under
 * the runs root, and under <runs>/translate/eval/ for any other (the
 * shipped one's folder is never written), unless --out FILE. */
#include "cli/cli_run.h"
#include "cli/commands.h"
#include "cli/translate_results.h"
#include "core/args.h"
#include "core/common.h"
#include "core/files.h"
#include "core/lines.h"
#include "core/threads.h"
#include "metrics/bleu.h"
#include "models/run_config.h"
#include "train/run_dir.h"
#include "train/translate.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRANSLATE_USAGE                                                                                      \
    "glue translate train [--config FILE.json] [--set key=value ...] [--out DIR] [--seed S] [--threads N]\n" \
    "                     [--resume] [--overwrite] [--stop-at STEP] [--checkpoint-every STEPS] [--quiet]\n"                  \
    "       glue translate eval [--model DIR|CKPT] [--split test2016|test2017|mscoco|test2018|val]\n"        \
    "                     [--beam N] [--alpha A] [--out FILE] [--json] [--threads N] [--results FILE.json]\n" \
    "       glue translate [--model DIR|CKPT] [--beam N] [--alpha A] [--threads N] [TEXT...]   (no TEXT: stdin lines)\n" \
    "       glue translate snapshot RUN_DIR OUT_DIR"
#define TRANSLATE_MAX_SETS 64
#define TRANSLATE_DEFAULT_SEED 42
#define TRANSLATE_STDIN_BATCH 64

/* ---- model location ---- */

/* The model `glue translate` uses when the user has trained none (paths are
 * relative to the repository, as the shipped BERT encoder's). */
#define TRANSLATE_SHIPPED_MODEL "models/translate-en-de-multi30k"

static void translate_default_dir(char *out, size_t cap) { snprintf(out, cap, "%s/translate", run_root()); }

/* DIR (holding model.ckpt) or a checkpoint file; dir_out gets the folder.
 * Without one: the user's trained run, else the shipped model. */
static Seq2Seq *translate_load(const char *where, char *dir_out, size_t cap) {
    char dir[4096], path[4200];
    if (!where) translate_default_dir(dir, sizeof dir);
    else snprintf(dir, sizeof dir, "%s", where);
    file_join(dir, RUN_CKPT, path, sizeof path);
    if (!where && !file_exists(path)) {
        char shipped[4200], model[4000];
        file_shipped(TRANSLATE_SHIPPED_MODEL, model, sizeof model);   /* the repository's, or the installed copy */
        file_join(model, RUN_CKPT, shipped, sizeof shipped);
        if (file_exists(shipped)) {
            snprintf(dir, sizeof dir, "%s", model);
            snprintf(path, sizeof path, "%s", shipped);
        }
    }
    if (!file_exists(path)) {
        if (where && file_exists(where)) {
            snprintf(path, sizeof path, "%s", where);
            const char *slash = strrchr(where, '/');
            snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - where) : 1, slash ? where : ".");
        } else {
            user_error_io("train one with: glue translate train (or give --model DIR)", "no translation model at %s",
                       path);
            return NULL;
        }
    }
    snprintf(dir_out, cap, "%s", dir);
    return s2s_load(path);
}

/* ---- train ---- */

#define TRANSLATE_HELP_SETTINGS "glue translate --help-settings lists the settings with their ranges"

/* The rules across the model's keys (heads divides d_model, ...), up front;
 * the vocabulary's size is not known yet: any valid one stands in. */
static int translate_check_model(const cJSON *config) {
    S2sConfig mc = s2s_config_default();
    if (s2s_config_from_json(&mc, config) != 0) return -1;
    if (mc.vocab_size < 5) mc.vocab_size = 5;
    return s2s_config_check(&mc);
}

static int translate_train(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    const char *config_file = args_str(&a, "--config", NULL), *out = args_str(&a, "--out", NULL);
    long seed = args_int(&a, "--seed", TRANSLATE_DEFAULT_SEED), threads = args_threads(&a, 0);
    long stop_at = args_int(&a, "--stop-at", 0), every = args_int(&a, "--checkpoint-every", 0);
    int resume = args_flag(&a, "--resume"), quiet = args_flag(&a, "--quiet"), overwrite = args_flag(&a, "--overwrite");
    const char *sets[TRANSLATE_MAX_SETS];
    int nsets = args_strs(&a, "--set", sets, TRANSLATE_MAX_SETS);
    const char *pos[2];
    int npos = args_positional(&a, pos, 2);
    int rc = args_finish(&a, TRANSLATE_USAGE);
    if (rc) return rc;
    if (npos != 0 || seed < 0 || every < 0) {
        user_error("usage: " TRANSLATE_USAGE, "translate train: %s",
                   npos != 0 ? "unexpected arguments" : "--seed and --checkpoint-every must not be negative");
        return EXIT_USAGE;
    }
    cJSON *config = s2s_run_config_build(config_file, sets, NULL, nsets);
    if (!config) return EXIT_USAGE;
    /* The model's and the run's settings within the ranges --help-settings
     * prints, before any data is read or file written. */
    int n_model = 0, n_run = 0;
    const SettingSpec *model_spec = s2s_model_settings(&n_model), *run_spec = s2s_run_settings(&n_run);
    if (settings_table_check(config, model_spec, n_model, "translate train", TRANSLATE_HELP_SETTINGS) != 0 ||
        settings_table_check(config, run_spec, n_run, "translate train", TRANSLATE_HELP_SETTINGS) != 0 ||
        translate_check_model(config) != 0) {
        cJSON_Delete(config);
        return EXIT_USAGE;
    }
    char dir[4096];
    if (out) snprintf(dir, sizeof dir, "%s", out);
    else translate_default_dir(dir, sizeof dir);
    char *command = cli_command_line(argc + 1, argv - 1);
    S2sTrainOptions o = {.config = config, .seed = (uint64_t)seed, .threads = threads_init((int)threads),
                         .out_dir = dir, .command = command, .resume = resume, .overwrite = overwrite,
                         .show_progress = !quiet,
                         .stop_at = stop_at, .checkpoint_every = every};
    rc = s2s_train(&o);
    if (rc == TRAIN_STOPPED) rc = 0;
    else
    if (rc == 0) {
        char path[4200];
        file_join(dir, RUN_RESULTS, path, sizeof path);
        cJSON *res = json_file_read(path, 1);
        const cJSON *best = cJSON_GetObjectItemCaseSensitive(res, "best");
        if (best) {
            char what[160];
            translate_best_describe(best, what, sizeof what);
            printf("translate: %s -> %s/%s\n", what, dir, RUN_CKPT);
        }
        cJSON_Delete(res);
    }
    free(command);
    cJSON_Delete(config);
    return rc;
}

/* The one line about sources longer than the model's positions: the decoder
 * keeps their first max_len - 1 pieces (seq2seq_decode.c). */
static void translate_report_truncated(const Seq2Seq *m, const int *src_len, int n, const char *what) {
    int cap = m->cfg.max_len - 1;
    long cut = 0, longest = 0;
    for (int i = 0; i < n; i++)
        if (src_len[i] > cap) {
            cut++;
            if (src_len[i] > longest) longest = src_len[i];
        }
    if (cut)
        user_warning("%ld of %d %s truncated to max_len %d pieces (the longest had %ld)", cut, n, what, cap, longest);
}

/* ---- eval ---- */

/* --split names -> Multi30k file stems. */
static const char *const SPLIT_NAMES[][2] = {
    {"test2016", "test_2016_flickr"}, {"test2017", "test_2017_flickr"}, {"mscoco", "test_2017_mscoco"},
    {"test2018", "test_2018_flickr"}, {"val", "val"}, {"dev", "val"},
};

static const char *translate_split_stem(const char *name) {
    for (size_t i = 0; i < sizeof SPLIT_NAMES / sizeof SPLIT_NAMES[0]; i++)
        if (strcmp(name, SPLIT_NAMES[i][0]) == 0 || strcmp(name, SPLIT_NAMES[i][1]) == 0) return SPLIT_NAMES[i][1];
    return NULL;
}

/* The run's config.json (data_dir, languages, decoding), else the defaults. */
static cJSON *translate_run_config(const char *dir) {
    char path[4200];
    file_join(dir, RUN_CONFIG, path, sizeof path);
    cJSON *c = file_exists(path) ? json_file_read(path, 1) : NULL;
    return c ? c : s2s_run_config_default();
}

/* The model (see translate_load), its run config in *cfg (caller frees) and
 * the decoding options: --beam / --alpha when given (> 0 / >= 0), else the
 * run's. NULL after a message. */
static Seq2Seq *translate_open(const char *where, long beam, double alpha, char *dir, size_t cap, cJSON **cfg,
                               S2sDecodeOptions *dec) {
    Seq2Seq *m = translate_load(where, dir, cap);
    if (!m) return NULL;
    *cfg = translate_run_config(dir);
    char who[4200];
    file_join(dir, RUN_CONFIG, who, sizeof who);
    if (s2s_decode_settings(*cfg, who, dec) != 0) {
        cJSON_Delete(*cfg);
        *cfg = NULL;
        s2s_free(m);
        return NULL;
    }
    if (beam > 0) dec->beam = (int)beam;
    if (alpha >= 0) dec->alpha = (float)alpha;
    return m;
}

/* Reads n lines of path (the tokenised references); NULL after a message. */
static char **translate_read_lines(const char *path, int n) {
    LineReader r;
    if (lines_open_or_report(&r, path)) return NULL;
    char **out = xcalloc((size_t)(n ? n : 1), sizeof(char *)), *line;
    size_t len;
    int i = 0, got;
    while (i < n + 1 && (got = lines_next(&r, &line, &len)) == 1) {
        if (i < n) out[i] = xstrndup(line, len);
        i++;
    }
    lines_close(&r);
    if (i != n) {
        user_error_data(NULL, "%s has %d lines, the source has %d", path, i, n);
        for (int k = 0; k < n; k++) free(out[k]);
        free(out);
        return NULL;
    }
    return out;
}

static int translate_write_lines(const char *path, char **lines, int n) {
    AtomicFile out;
    FILE *f = atomic_open(&out, path);
    if (!f) return 1;
    for (int i = 0; i < n; i++) fprintf(f, "%s\n", lines[i]);
    return atomic_commit(&out) ? 1 : 0;
}

static void translate_print_eval(const char *split, const S2sDecodeOptions *dec, int n, const BleuScore *b,
                                 const BleuScore *lc, const char *hyp_path, double secs, int json) {
    if (json) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "split", split);
        cJSON_AddNumberToObject(j, "sentences", n);
        cJSON_AddNumberToObject(j, "beam", dec->beam);
        cJSON_AddNumberToObject(j, "alpha", dec->alpha);
        cJSON_AddNumberToObject(j, "bleu", b->bleu);
        cJSON_AddNumberToObject(j, "bp", b->bp);
        cJSON_AddNumberToObject(j, "sys_len", (double)b->sys_len);
        cJSON_AddNumberToObject(j, "ref_len", (double)b->ref_len);
        if (lc) cJSON_AddNumberToObject(j, "bleu_tok_lc", lc->bleu);
        cJSON_AddStringToObject(j, "hypotheses", hyp_path);
        cJSON_AddNumberToObject(j, "seconds", secs);
        json_print_line(j);
        cJSON_Delete(j);
        return;
    }
    printf("%s (%d sentences, beam %d, alpha %.2f, %.1f s)\n", split, n, dec->beam, (double)dec->alpha, secs);
    printf("BLEU = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %ld ref_len = %ld)  "
           "[sacreBLEU: cased, 13a, detokenised]\n",
           b->bleu, b->precisions[0], b->precisions[1], b->precisions[2], b->precisions[3], b->bp,
           b->ref_len ? (double)b->sys_len / b->ref_len : 0.0, b->sys_len, b->ref_len);
    if (lc) printf("BLEU = %.2f  [lower-cased, tokenised references]\n", lc->bleu);
    printf("hypotheses: %s\n", hyp_path);
}

/* The decoding options of the command line: --beam and --alpha, -1 when not
 * given (translate_open keeps the run's), and --threads. */
typedef struct {
    long beam, threads;
    double alpha;
    int beam_given, alpha_given;   /* a given -1 or NaN is no "not given" */
} TranslateDecoding;

static void translate_decoding_read(Args *a, TranslateDecoding *d) {
    d->beam_given = args_flag(a, "--beam");
    d->alpha_given = args_flag(a, "--alpha");
    d->beam = args_int(a, "--beam", -1);
    d->alpha = args_double(a, "--alpha", -1);
    d->threads = args_threads(a, 0);
}

/* Checks the values given (a negative one used to decode with the run's own,
 * silently), then starts the threads. 0, or EXIT_USAGE after a message. */
static int translate_decoding_options(const TranslateDecoding *d) {
    if (d->beam_given && (d->beam < 1 || d->beam > 64)) {
        user_error_usage(NULL, "translate: --beam must be in [1, 64], got %ld", d->beam);
        return EXIT_USAGE;
    }
    if (d->alpha_given && !(d->alpha >= 0 && d->alpha <= 100)) {   /* the run setting's range; NaN fails too */
        user_error_usage("0 is no length penalty", "translate: --alpha must be in [0, 100], got %g", d->alpha);
        return EXIT_USAGE;
    }
    threads_init((int)d->threads);
    return 0;
}

/* 1 when dir is inside the runs root ($GLUE_RUNS or runs). */
static int translate_under_runs(const char *dir) {
    char root[PATH_MAX], real[PATH_MAX];
    if (!realpath(run_root(), root) || !realpath(dir, real)) return 0;
    size_t n = strlen(root);
    return strncmp(root, real, n) == 0 && (real[n] == '/' || real[n] == '\0');
}

/* Where eval writes the hypotheses (without --out): beside a model trained
 * under the runs root, else (a shipped model, one trained elsewhere) in
 * <runs>/translate/eval/<the model folder's name>/, never into that folder. */
static int translate_hyp_path(const char *dir, const char *name, char *out, size_t cap) {
    if (translate_under_runs(dir)) {
        file_join(dir, name, out, cap);
        return 0;
    }
    char real[PATH_MAX], where[4400];
    const char *base = realpath(dir, real) ? strrchr(real, '/') : NULL;
    snprintf(where, sizeof where, "%s/translate/eval/%s", run_root(), base && base[1] ? base + 1 : "model");
    if (file_make_dir(where) != 0) return -1;
    file_join(where, name, out, cap);
    return 0;
}

static int translate_eval(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    const char *where = args_str(&a, "--model", NULL), *split = args_str(&a, "--split", "test2016");
    const char *out = args_str(&a, "--out", NULL), *results = args_str(&a, "--results", NULL);
    TranslateDecoding d;
    translate_decoding_read(&a, &d);
    int json = args_flag(&a, "--json");
    const char *pos[2];
    int npos = args_positional(&a, pos, 2);
    int rc = args_finish(&a, TRANSLATE_USAGE);
    if (rc) return rc;
    const char *stem = translate_split_stem(split);
    if (npos != 0 || !stem) {
        user_error("splits: test2016 test2017 mscoco test2018 val", "translate eval: %s",
                   npos != 0 ? "unexpected arguments" : "unknown --split");
        return EXIT_USAGE;
    }
    if ((rc = translate_decoding_options(&d)) != 0) return rc;
    char dir[4096];
    cJSON *cfg;
    S2sDecodeOptions dec;
    Seq2Seq *m = translate_open(where, d.beam, d.alpha, dir, sizeof dir, &cfg, &dec);
    if (!m) return 1;
    const char *data = run_config_string(cfg, "data_dir", "data/mt/multi30k/raw");
    const char *sl = run_config_string(cfg, "src", "en"), *tl = run_config_string(cfg, "tgt", "de");
    char src[4200], ref[4200], tok[4200], hyp_path[4400];
    snprintf(src, sizeof src, "%s/%s.%s", data, stem, sl);
    snprintf(ref, sizeof ref, "%s/%s.%s", data, stem, tl);
    snprintf(tok, sizeof tok, "%s/../tok/%s.lc.norm.tok.%s", data, stem, tl);
    char hyp_name[256];
    snprintf(hyp_name, sizeof hyp_name, "%s.beam%d.hyp.%s", stem, dec.beam, tl);
    if (out) snprintf(hyp_path, sizeof hyp_path, "%s", out);
    else if (translate_hyp_path(dir, hyp_name, hyp_path, sizeof hyp_path) != 0) rc = 1;
    SubwordTokenizer *t = subword_create(m->vocab);
    S2sCorpus c;
    rc = rc || !t || s2s_corpus_load(&c, src, ref, t, 1) != 0;
    subword_free(t);
    if (rc == 0) {
        translate_report_truncated(m, c.src_len, c.n, "sources");
        double t0 = now_seconds();
        char **hyp = s2s_translate_corpus(m, &c, &dec, (int)run_config_number(cfg, "eval_batch", 64));
        double secs = now_seconds() - t0;
        BleuOptions cased = {.lowercase = 0, .tokenize = BLEU_TOKENIZE_13A};
        BleuOptions lower = {.lowercase = 1, .tokenize = BLEU_TOKENIZE_13A};
        BleuScore b, lc;
        bleu_corpus((const char *const *)hyp, (const char *const *)c.tgt_text, c.n, &cased, &b);
        char **tref = file_exists(tok) ? translate_read_lines(tok, c.n) : NULL;
        if (tref) bleu_corpus((const char *const *)hyp, (const char *const *)tref, c.n, &lower, &lc);
        rc = translate_write_lines(hyp_path, hyp, c.n);
        if (rc == 0) translate_print_eval(stem, &dec, c.n, &b, tref ? &lc : NULL, hyp_path, secs, json);
        if (rc == 0 && results) {
            char *command = cli_command_line(argc + 1, argv - 1);
            TranslateScore s = {.split = stem, .dec = &dec, .sentences = c.n, .cased = &b,
                                .tok_lc = tref ? &lc : NULL, .hypotheses = hyp_path, .command = command};
            rc = translate_results_add(results, dir, cfg, &s);
            free(command);
        }
        for (int i = 0; i < c.n; i++) { free(hyp[i]); if (tref) free(tref[i]); }
        free(hyp);
        free(tref);
        s2s_corpus_free(&c);
    }
    cJSON_Delete(cfg);
    s2s_free(m);
    return rc ? 1 : 0;
}

/* ---- translate text ---- */

/* Translates texts[0..n) and prints one line each; a NULL text (a line
 * refused as not UTF-8) prints an empty line, so output lines stay aligned
 * with input lines. */
static void translate_lines(Seq2Seq *m, SubwordTokenizer *t, const S2sDecodeOptions *dec, char **texts, int n) {
    S2sCorpus c = {0};
    c.n = n;
    c.src = xcalloc((size_t)n, sizeof(int *));
    c.tgt = xcalloc((size_t)n, sizeof(int *));
    c.src_len = xcalloc((size_t)n, sizeof(int));
    c.tgt_len = xcalloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++) {
        const char *text = texts[i] ? texts[i] : "";
        int len = (int)strlen(text);
        int cap = subword_encode(t, text, (size_t)len, NULL, 0);
        c.src[i] = xmalloc(sizeof(int) * (size_t)(cap ? cap : 1));
        c.src_len[i] = subword_encode(t, text, (size_t)len, c.src[i], cap);
    }
    translate_report_truncated(m, c.src_len, n, n == 1 ? "text" : "texts");
    char **hyp = s2s_translate_corpus(m, &c, dec, TRANSLATE_STDIN_BATCH);
    for (int i = 0; i < n; i++) {
        /* A blank line is a translation only of a blank input; else the model
         * produced nothing (untrained or diverged) and the user must know. */
        if (texts[i] && !hyp[i][0] && texts[i][strspn(texts[i], " \t\r")])
            user_warning("the model translated \"%.40s%s\" as nothing (is it trained? see its results.json)",
                         texts[i], strlen(texts[i]) > 40 ? "..." : "");
        puts(texts[i] ? hyp[i] : "");
        free(hyp[i]);
    }
    fflush(stdout);
    free(hyp);
    s2s_corpus_free(&c);
}

static int translate_text(int argc, char **argv) {
    Args a;
    args_init(&a, argc, argv);
    const char *where = args_str(&a, "--model", NULL);
    TranslateDecoding d;
    translate_decoding_read(&a, &d);
    const char *pos[ARGS_MAX];
    int npos = args_positional(&a, pos, ARGS_MAX);
    int rc = args_finish(&a, TRANSLATE_USAGE);
    if (rc || (rc = translate_decoding_options(&d)) != 0) return rc;
    for (int i = 0; i < npos; i++) {   /* as glue predict: refused, not cleaned (before the model loads) */
        char origin[32];
        snprintf(origin, sizeof origin, "argument %d", i + 1);
        if (cli_check_text(pos[i], strlen(pos[i]), origin) != 0) return 1;
    }
    char dir[4096];
    cJSON *cfg;
    S2sDecodeOptions dec;
    Seq2Seq *m = translate_open(where, d.beam, d.alpha, dir, sizeof dir, &cfg, &dec);
    if (!m) return 1;
    cJSON_Delete(cfg);
    SubwordTokenizer *t = subword_create(m->vocab);
    if (!t) { s2s_free(m); return 1; }
    if (npos > 0) {
        translate_lines(m, t, &dec, (char **)pos, npos);
    } else {
        /* stdin: batches of lines (one at a time from a terminal), each
         * batch printed as soon as it is done. */
        LineReader r;
        lines_open(&r, "/dev/stdin");
        char *batch[TRANSLATE_STDIN_BATCH], *line;
        size_t len;
        int n = 0, got, per = isatty(0) ? 1 : TRANSLATE_STDIN_BATCH;
        long bad = 0;
        while ((got = lines_next(&r, &line, &len)) == 1) {
            char origin[48];
            snprintf(origin, sizeof origin, "stdin:%ld", r.line_no);
            int ok = cli_check_text(line, len, origin) == 0;
            bad += !ok;
            batch[n++] = ok ? xstrndup(line, len) : NULL;
            if (n == per) {
                translate_lines(m, t, &dec, batch, n);
                for (int i = 0; i < n; i++) free(batch[i]);
                n = 0;
            }
        }
        if (got < 0) { lines_report(&r); rc = 1; }
        if (n > 0) translate_lines(m, t, &dec, batch, n);
        for (int i = 0; i < n; i++) free(batch[i]);
        if (bad) {
            fprintf(stderr, "%ld of %ld lines skipped (no translation: an empty line; see above)\n", bad, r.line_no);
            rc = 1;
        }
        lines_close(&r);
    }
    subword_free(t);
    s2s_free(m);
    return rc;
}

int cmd_translate(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "train") == 0) return translate_train(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "eval") == 0) return translate_eval(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "snapshot") == 0) {
        if (argc != 4 || argv[2][0] == '-' || argv[3][0] == '-') {
            user_error("usage: glue translate snapshot RUN_DIR OUT_DIR",
                       "translate snapshot takes a run directory and an output directory");
            return EXIT_USAGE;
        }
        return s2s_snapshot(argv[2], argv[3]);
    }
    return translate_text(argc, argv);
}
