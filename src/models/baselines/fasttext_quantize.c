/* fasttext_quantize.c — fastText's own compression, as the reference's
 * `fasttext quantize` (FastText::quantize; Joulin et al. 2016, "FastText.zip"):
 *   cutoff N   keep the N input rows of largest L2 norm (the end-of-text word
 *              always), drop the rest from the dictionary and the n-gram table;
 *   retrain    then train the kept rows and the output layer again (epochs, lr);
 *   quantize   the kept input rows by product quantization (dsub values per
 *              sub-vector, 256 centroids each; fasttext_pq.c), their norms
 *              apart with qnorm, and with qout the output matrix (dsub 2).
 * The model keeps its fp32 matrices, holding the rows the codes give back, so
 * prediction is unchanged and a saved then loaded model predicts the same. */
#include "models/baselines/fasttext.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/rng.h"
#include "models/run_config.h"

/* Rows per retraining step, as glue finetune's fastText batch. */
#define FT_RETRAIN_BATCH 1000

#define FQ(field) offsetof(FtQuantConfig, field)
const SettingSpec FT_QUANT_SETTINGS[FT_NUM_QUANT_SETTINGS] = {
    {"dsub", SETTING_INT, FQ(dsub), 2, 1, 10000, NULL, NULL},
    {"cutoff", SETTING_LONG, FQ(cutoff), 0, 0, 1e9, NULL, NULL},
    {"qnorm", SETTING_BOOL, FQ(qnorm), 0, 0, 1, NULL, NULL},
    {"qout", SETTING_BOOL, FQ(qout), 0, 0, 1, NULL, NULL},
    {"retrain", SETTING_BOOL, FQ(retrain), 0, 0, 1, NULL, NULL},
    {"epoch", SETTING_INT, FQ(epochs), 5, 1, RUN_MAX_EPOCHS, NULL, NULL},   /* the reference's defaults */
    {"lr", SETTING_FLOAT, FQ(lr), 0.05, RUN_MIN_LR, RUN_MAX_LR, NULL, NULL},
};
#undef FQ
_Static_assert(sizeof FT_QUANT_SETTINGS / sizeof FT_QUANT_SETTINGS[0] == FT_NUM_QUANT_SETTINGS, "FT_NUM_QUANT_SETTINGS");

int ft_quant_config_parse(const cJSON *j, FtQuantConfig *q) {
    memset(q, 0, sizeof *q);
    SettingsReader s = settings_reader(j, "fasttext quantize", "glue quantize RUN --dsub N --cutoff N ...");
    settings_table_read(&s, FT_QUANT_SETTINGS, FT_NUM_QUANT_SETTINGS, q);
    return s.failed ? -1 : 0;
}

cJSON *ft_quant_config_json(const FtQuantConfig *q) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "method", "pq");
    cJSON_AddNumberToObject(j, "version", FT_PQ_FORMAT);
    cJSON_AddNumberToObject(j, "dsub", q->dsub);
    cJSON_AddNumberToObject(j, "cutoff", (double)q->cutoff);
    cJSON_AddBoolToObject(j, "qnorm", q->qnorm);
    cJSON_AddBoolToObject(j, "qout", q->qout);
    cJSON_AddBoolToObject(j, "retrain", q->retrain);
    cJSON_AddNumberToObject(j, "epoch", q->epochs);
    char lr[32];   /* the float as given (0.05), not its double expansion */
    snprintf(lr, sizeof lr, "%g", q->lr);
    cJSON_AddNumberToObject(j, "lr", strtod(lr, NULL));
    return j;
}

long ft_kept_rows(const FastText *m, int32_t *rows) {
    long n = 0;
    for (long r = 0; r < m->rows; r++)
        if (m->wi_ready[r]) rows[n++] = (int32_t)r;
    return n;
}

static const float *ft_sort_norm;
static int ft_by_norm(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    float nx = ft_sort_norm[x], ny = ft_sort_norm[y];
    return nx > ny ? -1 : nx < ny ? 1 : (x > y) - (x < y);
}

/* The cutoff rows of largest norm (FT_EOS first) marked in keep (m->rows). */
static void ft_select_rows(const FastText *m, long cutoff, uint8_t *keep) {
    int C = m->cfg.dim;
    int32_t *rows = xmalloc((size_t)m->rows * sizeof *rows);
    long n = ft_kept_rows(m, rows);
    float *norm = xcalloc((size_t)m->rows, sizeof *norm);
    for (long i = 0; i < n; i++) {
        const float *w = m->wi + (size_t)rows[i] * C;
        double s = 0;
        for (int j = 0; j < C; j++) s += (double)w[j] * w[j];
        norm[rows[i]] = (float)sqrt(s);
    }
    int eos = strmap_find(&m->dict.map, NULL, 0, FT_EOS, strlen(FT_EOS));
    if (eos >= 0) norm[eos] = INFINITY;
    ft_sort_norm = norm;
    qsort(rows, (size_t)n, sizeof *rows, ft_by_norm);
    for (long i = 0; i < n && i < cutoff; i++) keep[rows[i]] = 1;
    free(norm);
    free(rows);
}

/* Keeps the rows marked: the dictionary loses the other words (ids renumbered
 * in their order), the table the other bucket rows. */
static void ft_prune(FastText *m, const uint8_t *keep) {
    int C = m->cfg.dim, V = word_dict_size(&m->dict);
    WordDict nd;
    memset(&nd, 0, sizeof nd);
    strmap_init(&nd.map);
    for (int i = 0; i < V; i++)
        if (keep[i]) word_dict_add(&nd, strmap_key(&m->dict.map, i), strmap_key_len(&m->dict.map, i), m->dict.count[i]);
    int nV = word_dict_size(&nd);
    long rows = nV + m->cfg.bucket;
    float *wi = xcalloc((size_t)rows * (size_t)C, sizeof *wi);
    uint8_t *ready = xcalloc((size_t)rows, 1);
    for (long r = 0, w = 0; r < m->rows; r++) {
        if (!keep[r]) continue;
        long to = r < V ? w++ : r - V + nV;
        memcpy(wi + (size_t)to * C, m->wi + (size_t)r * C, (size_t)C * sizeof *wi);
        ready[to] = 1;
    }
    word_dict_free(&m->dict);
    m->dict = nd;
    free(m->wi);
    free(m->wi_ready);
    m->wi = wi;
    m->wi_ready = ready;
    m->rows = rows;
}

/* The reference's retraining: the SGD of training, epochs over train with the
 * learning rate decaying linearly from lr, on the kept rows only (encode drops
 * the others once m is marked quantized). */
static void ft_retrain(FastText *m, const FtQuantConfig *q, const Dataset *train) {
    FtConfig saved = m->cfg;
    m->cfg.epochs = q->epochs;
    m->cfg.lr = q->lr;
    Encoded *e = ft_encode(m, train);
    int *rows = xmalloc((size_t)(train->n ? train->n : 1) * sizeof *rows);
    for (int i = 0; i < train->n; i++) rows[i] = i;
    long per_epoch = (train->n + FT_RETRAIN_BATCH - 1) / FT_RETRAIN_BATCH, total = per_epoch * q->epochs, step = 0;
    for (int ep = 0; ep < q->epochs; ep++) {
        Rng rng;
        rng_seed_stream(&rng, m->cfg.seed ^ 0x7265747261696eULL, (uint64_t)ep);
        rng_shuffle_int(&rng, rows, train->n);
        for (int s = 0; s < train->n; s += FT_RETRAIN_BATCH, step++)
            ft_train_rows(m, e, rows + s, train->n - s < FT_RETRAIN_BATCH ? train->n - s : FT_RETRAIN_BATCH,
                          (double)step / (double)total);
    }
    free(rows);
    ft_encoded_free(e);
    m->cfg = saved;
}

/* Quantizes n rows of mat (C wide) listed in rows (NULL: 0..n-1) into q and
 * writes back what the codes give. */
static void ft_quantize_rows(FtQMatrix *q, float *mat, const int32_t *rows, long n, int C, int dsub, int qnorm,
                             uint64_t seed) {
    float *x = xmalloc((size_t)n * (size_t)C * sizeof *x);
    for (long i = 0; i < n; i++) memcpy(x + (size_t)i * C, mat + (size_t)(rows ? rows[i] : i) * C, (size_t)C * sizeof *x);
    ft_qmatrix_build(q, x, n, C, dsub, qnorm, seed);
    for (long i = 0; i < n; i++) ft_qmatrix_row(q, i, mat + (size_t)(rows ? rows[i] : i) * C);
    free(x);
}

int ft_quantize(FastText *m, const cJSON *settings, const Dataset *train) {
    if (m->quantized) {
        user_error_usage("quantize the fp32 run it came from", "fasttext: the model is already quantized");
        return -1;
    }
    FtQuantConfig q;
    if (ft_quant_config_parse(settings, &q) != 0) return -1;
    if (q.retrain && !train) {
        user_error(NULL, "fasttext quantize: --retrain needs the training split");
        return -1;
    }
    if (q.retrain && q.cutoff == 0) {   /* the reference retrains only what a cutoff pruned */
        user_error_usage("add --cutoff N", "fasttext quantize: --retrain retrains after a cutoff; none given");
        return -1;
    }
    int32_t *rows = xmalloc((size_t)m->rows * sizeof *rows);
    long n = ft_kept_rows(m, rows);
    if (q.cutoff > 0 && q.cutoff < n) {
        uint8_t *keep = xcalloc((size_t)m->rows, 1);
        ft_select_rows(m, q.cutoff, keep);
        ft_prune(m, keep);
        free(keep);
        free(rows);
        rows = xmalloc((size_t)m->rows * sizeof *rows);
        n = ft_kept_rows(m, rows);
        m->quantized = 1;
        if (q.retrain) ft_retrain(m, &q, train);
    }
    ft_quantize_rows(&m->qi, m->wi, rows, n, m->cfg.dim, q.dsub, q.qnorm, m->cfg.seed);
    if (q.qout) ft_quantize_rows(&m->qo, m->wo, NULL, m->out_rows, m->cfg.dim, 2, q.qnorm, m->cfg.seed + 1);
    free(rows);
    m->qcfg = q;
    m->quantized = 1;
    return 0;
}
