/* pretrain_config.c — defaults, file and command-line settings of a pretraining
 * run, and their checks (see pretrain_config.h). */
#include "pretrain/pretrain_config.h"

#include "core/common.h"
#include "models/run_config.h"
#include "optim/schedule.h"
#include "pretrain/masking.h"
#include "text/tokenizer.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>


/* BERT's recipe where it applies (Devlin et al. 2019, appendix A.2). */
static cJSON *pretrain_default_config(const Task *unused) {
    (void)unused;
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "model", "tiny");
    cJSON_AddStringToObject(c, "vocab", "");
    cJSON *corpus = cJSON_AddArrayToObject(c, "corpus");
    cJSON_AddItemToArray(corpus, cJSON_CreateString(PRETRAIN_DEFAULT_WIKI));
    cJSON_AddItemToArray(corpus, cJSON_CreateString(PRETRAIN_DEFAULT_WIKI2));
    cJSON_AddItemToArray(corpus, cJSON_CreateString(PRETRAIN_DEFAULT_BROWN));
    cJSON_AddStringToObject(c, "eval_corpus", PRETRAIN_DEFAULT_EVAL);
    cJSON_AddNumberToObject(c, "seq_len", 128);
    cJSON_AddNumberToObject(c, "batch", 128);
    cJSON_AddNumberToObject(c, "accumulate", 1);
    cJSON_AddNumberToObject(c, "steps", 10000);
    cJSON_AddNumberToObject(c, "lr", 1e-4);
    cJSON_AddNumberToObject(c, "warmup", 1000);
    cJSON_AddStringToObject(c, "schedule", "linear");
    cJSON_AddNumberToObject(c, "weight_decay", 0.01);
    cJSON_AddNumberToObject(c, "beta1", 0.9);
    cJSON_AddNumberToObject(c, "beta2", 0.999);
    cJSON_AddNumberToObject(c, "adam_eps", 1e-6);
    cJSON_AddNumberToObject(c, "clip", 1.0);
    cJSON_AddNumberToObject(c, "dropout", 0.1);
    cJSON_AddNumberToObject(c, "mask_prob", 0.15);
    cJSON_AddNumberToObject(c, "max_predictions", 20);
    cJSON_AddNumberToObject(c, "mask_token_prob", 0.8);
    cJSON_AddNumberToObject(c, "random_token_prob", 0.1);
    cJSON_AddStringToObject(c, "objective", "mlm");
    cJSON_AddNumberToObject(c, "generator_size", 0.25);
    cJSON_AddNumberToObject(c, "generator_layers", 0);
    cJSON_AddNumberToObject(c, "disc_weight", 50);
    cJSON_AddBoolToObject(c, "whole_word", 0);
    cJSON_AddNumberToObject(c, "short_seq_prob", 0.1);
    cJSON_AddNumberToObject(c, "checkpoint_every", 1000);
    cJSON_AddNumberToObject(c, "log_every", 10);
    cJSON_AddNumberToObject(c, "eval_every", 0);
    cJSON_AddNumberToObject(c, "eval_batches", 0);
    cJSON_AddNumberToObject(c, "seed", 42);
    return c;
}

int pretrain_config_key_is_free(const char *key) {
    static const char *const FREE[] = {"checkpoint_every", "log_every", "eval_every", "eval_batches",
                                       "eval_corpus"};
    for (size_t i = 0; i < sizeof FREE / sizeof FREE[0]; i++)
        if (strcmp(key, FREE[i]) == 0) return 1;
    return 0;
}

int pretrain_config_build(PretrainConfig *pc, const char *config_file, const char *const *sets,
                          const char *const *origin, int nsets, const char *const *corpus, int n_corpus) {
    memset(pc, 0, sizeof *pc);
    /* The fine-tuning config rules, with these defaults in place of a model's. */
    const ModelOps ops = {.name = "pretrain", .default_config = pretrain_default_config};
    pc->json = run_config_build(&ops, NULL, config_file, sets, origin, nsets);
    if (!pc->json) return EXIT_USAGE;
    if (n_corpus > 0) {
        cJSON *arr = cJSON_CreateArray();
        for (int i = 0; i < n_corpus; i++) cJSON_AddItemToArray(arr, cJSON_CreateString(corpus[i]));
        cJSON_ReplaceItemInObjectCaseSensitive(pc->json, "corpus", arr);
    }
    int rc = pretrain_config_parse(pc);
    if (rc) pretrain_config_free(pc);   /* a failed build leaves nothing to free (fuzz_config found the leak) */
    return rc;
}

void pretrain_config_free(PretrainConfig *pc) {
    cJSON_Delete(pc->json);
    memset(pc, 0, sizeof *pc);
}

int pretrain_corpus_entry(const cJSON *e, CorpusFile *f, const char *key) {
    const cJSON *path = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "path") : e;
    const cJSON *fmt = cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "format") : NULL;
    if (!cJSON_IsString(path) || !path->valuestring[0] || (fmt && !cJSON_IsString(fmt))) {
        user_error("write \"FILE\", \"FORMAT:FILE\" or {\"path\": FILE, \"format\": FORMAT}",
                   "%s: bad corpus entry", key);
        return -1;
    }
    f->path = path->valuestring;
    f->format = CORPUS_AUTO;
    const char *colon = fmt ? NULL : strchr(path->valuestring, ':');
    char prefix[32];
    if (colon && (size_t)(colon - path->valuestring) < sizeof prefix) {
        snprintf(prefix, sizeof prefix, "%.*s", (int)(colon - path->valuestring), path->valuestring);
        if (corpus_parse_format(prefix, &f->format) == 0) f->path = colon + 1;
    }
    if (fmt && corpus_parse_format(fmt->valuestring, &f->format)) {
        user_error("formats: text, wikiextractor, brown, wikitext, auto", "%s: unknown corpus format '%s'", key,
                   fmt->valuestring);
        return -1;
    }
    return 0;
}

/* Number `key` into *out if in [lo, hi] (and whole when integral); -1 after a message. */
static int get_num(const cJSON *j, const char *key, double lo, double hi, int integral, double *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!(x >= lo && x <= hi) || (integral && x != floor(x))) {
        user_error(NULL, "setting '%s' must be %s in [%g, %g]", key, integral ? "a whole number" : "a number",
                   lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

int pretrain_config_parse(PretrainConfig *pc) {
    const cJSON *j = pc->json;
    double v[32];
    int bad = 0, k = 0;
    bad |= get_num(j, "seq_len", 3, MASKING_MAX_LEN, 1, &v[k++]);
    bad |= get_num(j, "batch", 1, 1 << 16, 1, &v[k++]);
    bad |= get_num(j, "accumulate", 1, 1 << 16, 1, &v[k++]);
    bad |= get_num(j, "steps", 1, 1e12, 1, &v[k++]);
    bad |= get_num(j, "warmup", 0, 1e12, 1, &v[k++]);
    bad |= get_num(j, "lr", 0, 10, 0, &v[k++]);
    bad |= get_num(j, "weight_decay", 0, 10, 0, &v[k++]);
    bad |= get_num(j, "beta1", 0, 0.999999, 0, &v[k++]);
    bad |= get_num(j, "beta2", 0, 0.999999999, 0, &v[k++]);
    bad |= get_num(j, "adam_eps", 1e-30, 1, 0, &v[k++]);
    bad |= get_num(j, "clip", 0, 1e9, 0, &v[k++]);
    bad |= get_num(j, "dropout", 0, 0.99, 0, &v[k++]);
    bad |= get_num(j, "mask_prob", 0.001, 1, 0, &v[k++]);
    bad |= get_num(j, "max_predictions", 1, MASKING_MAX_LEN, 1, &v[k++]);
    bad |= get_num(j, "short_seq_prob", 0, 1, 0, &v[k++]);
    bad |= get_num(j, "checkpoint_every", 0, 1e12, 1, &v[k++]);
    bad |= get_num(j, "log_every", 1, 1e12, 1, &v[k++]);
    bad |= get_num(j, "eval_every", 0, 1e12, 1, &v[k++]);
    bad |= get_num(j, "eval_batches", 0, 1e12, 1, &v[k++]);
    bad |= get_num(j, "seed", 0, 9007199254740992.0, 1, &v[k++]);
    bad |= get_num(j, "mask_token_prob", 0, 1, 0, &v[k++]);
    bad |= get_num(j, "random_token_prob", 0, 1, 0, &v[k++]);
    bad |= get_num(j, "generator_size", 0.01, 1, 0, &v[k++]);
    bad |= get_num(j, "generator_layers", 0, 1000, 1, &v[k++]);
    bad |= get_num(j, "disc_weight", 0, 1e6, 0, &v[k++]);
    if (bad) return EXIT_USAGE;
    k = 0;
    pc->seq_len = (int)v[k++];
    pc->batch = (int)v[k++];
    pc->accumulate = (int)v[k++];
    pc->steps = (long)v[k++];
    pc->warmup = (long)v[k++];
    pc->lr = v[k++];
    pc->weight_decay = v[k++];
    pc->beta1 = v[k++];
    pc->beta2 = v[k++];
    pc->adam_eps = v[k++];
    pc->clip = v[k++];
    pc->dropout = v[k++];
    pc->mask_prob = v[k++];
    pc->max_predictions = (int)v[k++];
    pc->short_seq_prob = v[k++];
    pc->checkpoint_every = (long)v[k++];
    pc->log_every = (long)v[k++];
    pc->eval_every = (long)v[k++];
    pc->eval_batches = (long)v[k++];
    pc->seed = (uint64_t)v[k++];
    pc->mask_token_prob = v[k++];
    pc->random_token_prob = v[k++];
    pc->generator_size = v[k++];
    pc->generator_layers = (int)v[k++];
    pc->disc_weight = v[k++];
    if (pc->mask_token_prob + pc->random_token_prob > 1.0 + 1e-12) {
        user_error("the rest of the targets stay unchanged: keep the two at most 1 together",
                   "mask_token_prob %g + random_token_prob %g is more than 1", pc->mask_token_prob,
                   pc->random_token_prob);
        return EXIT_USAGE;
    }
    pc->objective = run_config_string(j, "objective", "mlm");
    if (strcmp(pc->objective, "mlm") != 0 && strcmp(pc->objective, "electra") != 0) {
        user_error("objective is \"mlm\" (masked LM) or \"electra\" (replaced-token detection)",
                   "unknown objective '%s'", pc->objective);
        return EXIT_USAGE;
    }
    pc->whole_word = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "whole_word"));
    pc->schedule = run_config_string(j, "schedule", "linear");
    ScheduleKind sk;
    if (schedule_parse(pc->schedule, &sk)) return EXIT_USAGE;

    pc->model = run_config_string(j, "model", "tiny");
    if (bert_config_resolve(pc->model, &pc->bert)) return EXIT_USAGE;
    pc->bert.hidden_dropout = (float)pc->dropout;
    pc->bert.attention_dropout = (float)pc->dropout;
    if (bert_config_check(&pc->bert, pc->model)) return EXIT_USAGE;
    if (pretrain_config_is_electra(pc) && pretrain_generator_config(pc, &pc->generator)) return EXIT_USAGE;
    if (pc->seq_len > pc->bert.max_position) {
        user_error(NULL, "seq_len %d is longer than the model's max_position_embeddings %d", pc->seq_len,
                   pc->bert.max_position);
        return EXIT_USAGE;
    }
    const char *vocab = run_config_string(j, "vocab", "");
    pc->vocab = vocab[0] ? vocab : tokenizer_default_vocab_path();

    const cJSON *corpus = cJSON_GetObjectItemCaseSensitive(j, "corpus");
    pc->n_corpus = cJSON_IsArray(corpus) ? cJSON_GetArraySize(corpus) : 0;
    if (pc->n_corpus < 1 || pc->n_corpus > PRETRAIN_MAX_CORPUS) {
        user_error(NULL, "corpus: give 1 to %d files", PRETRAIN_MAX_CORPUS);
        return EXIT_USAGE;
    }
    int i = 0;
    for (const cJSON *e = corpus->child; e; e = e->next)
        if (pretrain_corpus_entry(e, &pc->corpus[i++], "corpus")) return EXIT_USAGE;
    if (pretrain_corpus_entry(cJSON_GetObjectItemCaseSensitive(j, "eval_corpus"), &pc->eval_corpus, "eval_corpus"))
        return EXIT_USAGE;
    return 0;
}

int pretrain_config_is_electra(const PretrainConfig *pc) { return strcmp(pc->objective, "electra") == 0; }

/* ELECTRA's generator: the discriminator's layers (or generator_layers) at
 * generator_size of its width, rounded to a multiple of 16 (the fused QKV
 * layout), FFN 4x, two heads or one per 64 dimensions (two, so that ALiBi
 * gives it a local and a global head as the discriminator has), embeddings
 * shared with the discriminator. */
int pretrain_generator_config(const PretrainConfig *pc, BertConfig *g) {
    *g = pc->bert;
    int C = (int)lrint(pc->generator_size * pc->bert.hidden_size / 16.0) * 16;
    if (C < 16) C = 16;
    g->hidden_size = C;
    g->num_heads = C / 64 > 2 ? C / 64 : 2;
    while (C % g->num_heads) g->num_heads--;
    g->intermediate_size = 4 * C;
    g->embedding_size = bert_embedding_size(&pc->bert);
    if (pc->generator_layers > 0) g->num_layers = pc->generator_layers;
    return bert_config_check(g, "generator");
}

cJSON *pretrain_config_defaults(void) { return pretrain_default_config(NULL); }
