/* entity_memory.h — one update of the Recurrent Entity Network's dynamic
 * memory (Henaff et al. 2017, "Tracking the World State with Recurrent
 * Entity Networks", §2): M blocks, each a key w_j (H) and a value h_j (H),
 * read the input s_t (H) of step t:
 *   g_j  = sigmoid(s^T h_j + s^T w_j)
 *   h~_j = PReLU(U h_j + V w_j + W s)                 U, V, W (H, H); slopes (H)
 *   h_j <- (h_j + g_j h~_j) / ||h_j + g_j h~_j||      (L2 norm: forgetting)
 * All blocks in one call (three (M, H) x (H, H) GEMMs and a matrix-vector
 * product); nothing is allocated. */
#ifndef GLUE_NN_ENTITY_MEMORY_H
#define GLUE_NN_ENTITY_MEMORY_H

typedef struct EntMemWeights {
    const float *keys;       /* (M, H) w_j */
    const float *U, *V, *W;  /* (H, H) each, applied as x W^T (PyTorch's Linear without bias) */
    const float *slope;      /* (H) the PReLU's */
} EntMemWeights;

typedef struct EntMemGrads {
    float *keys, *U, *V, *W, *slope;   /* same shapes; ADDED */
} EntMemGrads;

/* Floats of scratch forward and backward need. */
long entity_memory_scratch(int M, int H);

/* h (M, H) from hp (M, H) and s (H); saves g (M), pre (M, H) (before the
 * PReLU) and norm (M). h may not alias hp. */
void entity_memory_forward(float *h, float *g, float *pre, float *norm, const float *hp, const float *s,
                           EntMemWeights w, int M, int H, float *scratch);

/* Given dh (M, H) of the forward's output h: ADDS dhp (M, H), ds (H) and the
 * weights' gradients. */
void entity_memory_backward(float *dhp, float *ds, EntMemGrads gw, const float *dh, const float *h, const float *g,
                            const float *pre, const float *norm, const float *hp, const float *s, EntMemWeights w,
                            int M, int H, float *scratch);

#endif
