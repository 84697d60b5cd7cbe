/* fasttext_io_pq.c — the checkpoint of a product-quantized fastText model
 * (fasttext_quantize.c), next to fasttext_io.c's fp32 one. Same config (plus
 * "quantized": the settings, "method": "pq", "version") and blobs ("words" and
 * "counts" of the kept words only, "bucket_rows" the kept bucket rows); the
 * weights are, for the kept input rows (words, then the bucket rows in order)
 * and, with qout, for the output rows:
 *   "<m>_codes"           int8 (rows, nsub): centroid index - 128
 *   "<m>_centroids"       f32 (ksub * dim), ksub = min(256, rows), fasttext_pq.h's layout
 *   "<m>_norm_codes"      int8 (rows), qnorm only
 *   "<m>_norm_centroids"  f32 (ksub), qnorm only
 * with m = "wi", and "wo" (or the fp32 tensor "wo" without qout); "bias" (1).
 * The int8 tensors make the file version 2 (core/checkpoint.h): a glue from
 * before int8 checkpoints refuses it by its version. */
#include "models/baselines/fasttext.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"

/* The format this code writes and reads; a later one is refused by name. */

static int ft_write_qmatrix(CkptWriter *w, const char *prefix, const FtQMatrix *q) {
    char name[64];
    int rc = 0;
    long n = q->rows, cells = n * q->pq.nsub;
    int8_t *b = xmalloc((size_t)(cells > n ? cells : n) + 1);
    for (long i = 0; i < cells; i++) b[i] = (int8_t)((int)q->codes[i] - 128);
    snprintf(name, sizeof name, "%s_codes", prefix);
    rc |= checkpoint_write_tensor_i8(w, name, (int[]){(int)n, q->pq.nsub}, 2, b);
    snprintf(name, sizeof name, "%s_centroids", prefix);
    rc |= checkpoint_write_tensor(w, name, CKPT_F32, (int[]){q->pq.ksub * q->pq.dim}, 1, q->pq.centroids);
    if (q->qnorm) {
        for (long i = 0; i < n; i++) b[i] = (int8_t)((int)q->norm_codes[i] - 128);
        snprintf(name, sizeof name, "%s_norm_codes", prefix);
        rc |= checkpoint_write_tensor_i8(w, name, (int[]){(int)n}, 1, b);
        snprintf(name, sizeof name, "%s_norm_centroids", prefix);
        rc |= checkpoint_write_tensor(w, name, CKPT_F32, (int[]){q->npq.ksub}, 1, q->npq.centroids);
    }
    free(b);
    return rc ? -1 : 0;
}

int ft_write_quantized(CkptWriter *w, const FastText *m) {
    int rc = ft_write_qmatrix(w, "wi", &m->qi);
    if (m->qcfg.qout) rc |= ft_write_qmatrix(w, "wo", &m->qo);
    else rc |= checkpoint_write_tensor(w, "wo", CKPT_F32, (int[]){m->out_rows, m->cfg.dim}, 2, m->wo);
    rc |= checkpoint_write_tensor(w, "bias", CKPT_F32, (int[]){1}, 1, &m->bias);
    return rc ? -1 : 0;
}

/* ---- loading ---- */

/* Codes (n) from an int8 tensor: each < ksub. NULL when missing, not int8,
 * of another size or out of range. */
static uint8_t *ft_read_codes(const Checkpoint *c, const char *name, long rows, long cols, int ksub) {
    const CkptTensor *t = ft_tensor(c, name, rows, cols);
    if (!t || t->dtype != CKPT_I8) return NULL;
    uint8_t *codes = xmalloc((size_t)t->numel + 1);
    for (long i = 0; i < t->numel; i++) {
        float v = t->data[i] + 128.0f;
        if (!(v >= 0.0f && v < (float)ksub) || v != floorf(v)) {
            free(codes);
            return NULL;
        }
        codes[i] = (uint8_t)v;
    }
    return codes;
}

/* A finite f32 tensor of (n) (cols 0) or (n, cols) into dst. */
static int ft_read_f32(const Checkpoint *c, const char *name, long n, long cols, float *dst) {
    const CkptTensor *t = ft_tensor(c, name, n, cols);
    if (!t || t->dtype != CKPT_F32) return -1;
    if (cols) n *= cols;
    for (long i = 0; i < n; i++)
        if (!isfinite(t->data[i])) return -1;
    memcpy(dst, t->data, (size_t)n * sizeof *dst);
    return 0;
}

/* q from the tensors of prefix for a (rows, dim) matrix; 0, or -1 after a message. */
static int ft_read_qmatrix(const Checkpoint *c, const char *prefix, long rows, int dim, int dsub, int qnorm,
                           FtQMatrix *q, const char *path) {
    char codes[64], cents[64];
    memset(q, 0, sizeof *q);
    q->rows = rows;
    q->qnorm = qnorm;
    ft_pq_init(&q->pq, dim, dsub, ft_pq_ksub(rows));
    snprintf(codes, sizeof codes, "%s_codes", prefix);
    snprintf(cents, sizeof cents, "%s_centroids", prefix);
    q->codes = ft_read_codes(c, codes, rows, q->pq.nsub, q->pq.ksub);
    if (!q->codes || ft_read_f32(c, cents, (long)q->pq.ksub * dim, 0, q->pq.centroids) != 0)
        return ft_bad(path, "quantized weights missing, of the wrong shape, out of range or not finite");
    if (!qnorm) return 0;
    ft_pq_init(&q->npq, 1, 1, ft_pq_ksub(rows));
    snprintf(codes, sizeof codes, "%s_norm_codes", prefix);
    snprintf(cents, sizeof cents, "%s_norm_centroids", prefix);
    q->norm_codes = ft_read_codes(c, codes, rows, 0, q->npq.ksub);
    if (!q->norm_codes || ft_read_f32(c, cents, q->npq.ksub, 0, q->npq.centroids) != 0)
        return ft_bad(path, "quantized norms missing, of the wrong shape, out of range or not finite");
    return 0;
}

/* The kept bucket rows (ascending, inside the table) marked in wi_ready. */
static int ft_read_kept(FastText *m, const Checkpoint *c, const char *path) {
    long V = word_dict_size(&m->dict);
    const CkptBlob *rows = ft_blob(c, "bucket_rows", -(long)sizeof(int32_t));
    if (!rows) return ft_bad(path, "no bucket rows");
    long nb = (long)(rows->size / sizeof(int32_t));
    const int32_t *idx = (const int32_t *)rows->data;
    memset(m->wi_ready, 1, (size_t)V);
    for (long i = 0; i < nb; i++) {
        if (idx[i] < V || idx[i] >= m->rows || (i > 0 && idx[i] <= idx[i - 1])) return ft_bad(path, "bad bucket row index");
        m->wi_ready[idx[i]] = 1;
    }
    return 0;
}

static int ft_read_qconfig(FastText *m, const cJSON *j, const char *path) {
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(j, "method");
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(j, "version");
    if (!cJSON_IsString(method) || strcmp(method->valuestring, "pq") != 0 || !cJSON_IsNumber(version))
        return ft_bad(path, "its \"quantized\" config is not fastText's product quantization");
    if (version->valuedouble != FT_PQ_FORMAT) {
        char what[160];
        snprintf(what, sizeof what, "quantized format version %g; this glue reads version %d", version->valuedouble,
                 FT_PQ_FORMAT);
        return ft_bad(path, what);
    }
    cJSON *settings = cJSON_Duplicate(j, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(settings, "method");
    cJSON_DeleteItemFromObjectCaseSensitive(settings, "version");
    int rc = ft_quant_config_parse(settings, &m->qcfg);
    cJSON_Delete(settings);
    return rc == 0 ? 0 : ft_bad(path, "bad quantization settings");
}

int ft_load_quantized(FastText *m, const Checkpoint *c, const cJSON *quantized, const char *path) {
    int C = m->cfg.dim;
    if (ft_read_qconfig(m, quantized, path) != 0 || ft_read_kept(m, c, path) != 0) return -1;
    int32_t *rows = xmalloc((size_t)m->rows * sizeof *rows);
    long n = ft_kept_rows(m, rows);
    int rc = ft_read_qmatrix(c, "wi", n, C, m->qcfg.dsub, m->qcfg.qnorm, &m->qi, path);
    for (long i = 0; rc == 0 && i < n; i++) ft_qmatrix_row(&m->qi, i, m->wi + (size_t)rows[i] * C);
    free(rows);
    if (rc != 0) return -1;
    if (m->qcfg.qout) {
        if (ft_read_qmatrix(c, "wo", m->out_rows, C, 2, m->qcfg.qnorm, &m->qo, path) != 0) return -1;
        for (long r = 0; r < m->out_rows; r++) ft_qmatrix_row(&m->qo, r, m->wo + (size_t)r * C);
    } else {
        if (ft_read_f32(c, "wo", m->out_rows, C, m->wo) != 0)
            return ft_bad(path, "output layer missing, of the wrong shape or not finite");
    }
    const CkptTensor *bias = ft_tensor(c, "bias", 1, 0);
    if (!bias || !isfinite(bias->data[0])) return ft_bad(path, "no bias");
    m->bias = bias->data[0];
    m->quantized = 1;
    return 0;
}
