/* pretrain_config.c — defaults, file and command-line settings of a pretraining
 * run, and their checks (see pretrain_config.h). */
#include "pretrain/pretrain_config.h"

#include "core/blas.h"
#include "core/common.h"
#include "models/run_config.h"
#include "optim/schedule.h"
#include "pretrain/masking.h"
#include "text/tokenizer.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <string.h>


/* The numbers, flags and names of a pretraining run: BERT's recipe where it
 * applies (Devlin et al. 2019, appendix A.2). One table gives the defaults
 * and the checked read, in the order config.json lists them. */
#define PC(field) offsetof(PretrainConfig, field)
/* What --help-settings says the two texts may be (pretrain_config_parse and
 * schedule_parse refuse anything else). */
static const char *const PRETRAIN_OBJECTIVE_HELP[] = {"one of: mlm electra", NULL};
static const char *const PRETRAIN_SCHEDULE_HELP[] = {"one of: constant linear cosine inv_sqrt", NULL};
static const SettingSpec PRETRAIN_SETTINGS[] = {
    {"seq_len", SETTING_INT, PC(seq_len), 128, 3, MASKING_MAX_LEN, NULL, NULL},
    {"batch", SETTING_INT, PC(batch), 128, 1, 1 << 16, NULL, NULL},
    {"accumulate", SETTING_INT, PC(accumulate), 1, 1, 1 << 16, NULL, NULL},
    {"steps", SETTING_LONG, PC(steps), 10000, 1, 1e12, NULL, NULL},
    {"lr", SETTING_REAL, PC(lr), 1e-4, 0, 10, NULL, NULL},
    {"warmup", SETTING_LONG, PC(warmup), 1000, 0, 1e12, NULL, NULL},
    {"schedule", SETTING_STRING, PC(schedule), 0, 0, 0, "linear", PRETRAIN_SCHEDULE_HELP},
    {"weight_decay", SETTING_REAL, PC(weight_decay), 0.01, 0, 1, NULL, NULL},
    {"beta1", SETTING_REAL, PC(beta1), 0.9, 0, 0.999999, NULL, NULL},
    {"beta2", SETTING_REAL, PC(beta2), 0.999, 0, 0.999999999, NULL, NULL},
    {"adam_eps", SETTING_REAL, PC(adam_eps), 1e-6, 1e-30, 1, NULL, NULL},
    {"clip", SETTING_REAL, PC(clip), 1.0, 0, 1e9, NULL, NULL},
    {"dropout", SETTING_REAL, PC(dropout), 0.1, 0, 0.99, NULL, NULL},
    {"mask_prob", SETTING_REAL, PC(mask_prob), 0.15, 0.001, 1, NULL, NULL},
    {"max_predictions", SETTING_INT, PC(max_predictions), 20, 1, MASKING_MAX_LEN, NULL, NULL},
    {"mask_token_prob", SETTING_REAL, PC(mask_token_prob), 0.8, 0, 1, NULL, NULL},
    {"random_token_prob", SETTING_REAL, PC(random_token_prob), 0.1, 0, 1, NULL, NULL},
    {"objective", SETTING_STRING, PC(objective), 0, 0, 0, "mlm", PRETRAIN_OBJECTIVE_HELP},
    {"generator_size", SETTING_REAL, PC(generator_size), 0.25, 0.01, 1, NULL, NULL},
    {"generator_layers", SETTING_INT, PC(generator_layers), 0, 0, 1000, NULL, NULL},
    {"disc_weight", SETTING_REAL, PC(disc_weight), 50, 0, 1e6, NULL, NULL},
    {"whole_word", SETTING_BOOL, PC(whole_word), 0, 0, 1, NULL, NULL},
    {"short_seq_prob", SETTING_REAL, PC(short_seq_prob), 0.1, 0, 1, NULL, NULL},
    {"checkpoint_every", SETTING_LONG, PC(checkpoint_every), 1000, 0, 1e12, NULL, NULL},
    {"log_every", SETTING_LONG, PC(log_every), 10, 1, 1e12, NULL, NULL},
    {"eval_every", SETTING_LONG, PC(eval_every), 0, 0, 1e12, NULL, NULL},
    {"eval_batches", SETTING_LONG, PC(eval_batches), 0, 0, 1e12, NULL, NULL},
    {"seed", SETTING_U64, PC(seed), 42, 0, 9007199254740992.0, NULL, NULL},
    /* Start from a checkpoint's weights (model.ckpt of glue pretrain, or its
     * run directory): continued pretraining, or a long run carried on from a
     * committed snapshot. Fresh optimizer; ELECTRA's generator comes from the
     * checkpoint when it holds one (a snapshot of an ELECTRA run), else it
     * starts fresh (it shares the embeddings). */
    {"init", SETTING_STRING, PC(init), 0, 0, 0, "", NULL},
    /* init of fewer layers than model, stacked into it (pretrain_config.h). */
    {"init_stack", SETTING_INT, PC(init_stack), 0, 0, 1, NULL, NULL},
    /* A snapshot's run carried on where it was: the schedule (and the step
     * counter, and the end at `steps`) from this step, not from 0. */
    {"init_step", SETTING_LONG, PC(init_step), 0, 0, 1e12, NULL, NULL},
    /* Steps over which the learning rate ramps up again after init_step: the
     * fresh AdamW has no moments yet, and a first step at the schedule's full
     * rate is as unstable as one without warm-up. */
    {"rewarm", SETTING_LONG, PC(rewarm), 0, 0, 1e12, NULL, NULL},
    /* Data parallel (dist.h): how the ranks sum gradients and keep AdamW's
     * state. A couple of MiB per bucket is what PyTorch's DDP found keeps
     * a sum's latency small against its bytes while leaving most of the
     * backward to overlap with (it uses 25 MiB on GPUs; our layers are
     * smaller: BERT-mini's is 3 MiB). */
    {"bucket_mb", SETTING_REAL, PC(bucket_mb), 2, 0, 1024, NULL, NULL},
    {"zero", SETTING_INT, PC(zero), 0, 0, 1, NULL, NULL},
    {"precision", SETTING_CHOICE, PC(precision), 0, 0, 0, "fp32", MATMUL_PRECISION_NAMES},
};
#undef PC
#define NUM_PRETRAIN_SETTINGS ((int)(sizeof PRETRAIN_SETTINGS / sizeof PRETRAIN_SETTINGS[0]))

static cJSON *pretrain_default_config(void) {
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "model", "tiny");
    cJSON_AddStringToObject(c, "vocab", "");
    cJSON *corpus = cJSON_AddArrayToObject(c, "corpus");
    cJSON_AddItemToArray(corpus, cJSON_CreateString(PRETRAIN_DEFAULT_WIKI));
    cJSON_AddItemToArray(corpus, cJSON_CreateString(PRETRAIN_DEFAULT_WIKI2));
    cJSON_AddItemToArray(corpus, cJSON_CreateString(PRETRAIN_DEFAULT_BROWN));
    cJSON_AddStringToObject(c, "eval_corpus", PRETRAIN_DEFAULT_EVAL);
    settings_table_defaults(c, PRETRAIN_SETTINGS, NUM_PRETRAIN_SETTINGS);
    return c;
}

const char *const PRETRAIN_FREE_KEYS[] = {"checkpoint_every", "log_every", "eval_every", "eval_batches", "eval_corpus",
                                         "bucket_mb", "zero", "precision", "steps", NULL};

int pretrain_config_build(PretrainConfig *pc, const char *config_file, const char *const *sets,
                          const char *const *origin, int nsets, const char *const *corpus, int n_corpus) {
    memset(pc, 0, sizeof *pc);
    /* The fine-tuning config rules, with these defaults in place of a model's. */
    pc->json = run_config_build(pretrain_default_config(), config_file, sets, origin, nsets);
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

#define PRETRAIN_SETTINGS_HINT "glue pretrain --help-settings lists the settings and their defaults"

int pretrain_config_read_settings(const cJSON *j, const char *origin, PretrainConfig *pc) {
    memset(pc, 0, sizeof *pc);
    SettingsReader sr = settings_reader(j, origin, PRETRAIN_SETTINGS_HINT);
    settings_table_read(&sr, PRETRAIN_SETTINGS, NUM_PRETRAIN_SETTINGS, pc);
    return sr.failed ? -1 : 0;
}

int pretrain_config_parse(PretrainConfig *pc) {
    const cJSON *j = pc->json;
    /* Every key is there (the defaults are merged in): required catches a
     * config edited into a wrong shape. */
    SettingsReader sr = settings_reader(j, "pretrain", PRETRAIN_SETTINGS_HINT);
    sr.required = 1;
    settings_table_read(&sr, PRETRAIN_SETTINGS, NUM_PRETRAIN_SETTINGS, pc);
    if (sr.failed) return EXIT_USAGE;
    if (pc->mask_token_prob + pc->random_token_prob > 1.0 + 1e-12) {
        user_error("the rest of the targets stay unchanged: keep the two at most 1 together",
                   "mask_token_prob %g + random_token_prob %g is more than 1", pc->mask_token_prob,
                   pc->random_token_prob);
        return EXIT_USAGE;
    }
    if (strcmp(pc->objective, "mlm") != 0 && strcmp(pc->objective, "electra") != 0) {
        user_error("objective is \"mlm\" (masked LM) or \"electra\" (replaced-token detection)",
                   "unknown objective '%s'", pc->objective);
        return EXIT_USAGE;
    }
    ScheduleKind sk;
    if (schedule_parse(pc->schedule, &sk)) return EXIT_USAGE;
    if (pc->init_step > 0 && !pc->init[0]) {
        user_error("init_step carries a run on from its snapshot: add --set init=DIR (glue pretrain snapshot prints "
                   "the whole command)",
                   "init_step %ld without init", pc->init_step);
        return EXIT_USAGE;
    }
    if (pc->init_stack && !pc->init[0]) {
        user_error("init_stack grows a shallower checkpoint into the model: add --set init=DIR", "init_stack without init");
        return EXIT_USAGE;
    }
    if (pc->init_step >= pc->steps) {
        user_error("steps is the length of the whole schedule (the original run's), not the steps that remain",
                   "init_step %ld is not below steps %ld", pc->init_step, pc->steps);
        return EXIT_USAGE;
    }

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

cJSON *pretrain_config_defaults(void) { return pretrain_default_config(); }

const SettingSpec *pretrain_config_settings(int *n) {
    *n = NUM_PRETRAIN_SETTINGS;
    return PRETRAIN_SETTINGS;
}
