/* word_sentences.h — a split encoded as word ids plus each text's sentences
 * (text/sentences.h), for the word models that read a text sentence by
 * sentence: HAN (the sentence level), the DMN (a fact per sentence) and the
 * Recurrent Entity Network (a memory update per sentence). Written by HAN's
 * encode (han.c); the sentences of a row's text sum to its encoded words. */
#ifndef GLUE_WORD_SENTENCES_H
#define GLUE_WORD_SENTENCES_H

#include <stdint.h>

#include "models/baselines/word_features.h"
#include "models/model.h"

typedef struct HanSeqs {
    WordSeqs w;          /* first: a HanSeqs reads as its WordSeqs */
    int32_t *sents;      /* words of each sentence of row r's a then b: sents[soff[r] .. soff[r+1]) */
    int64_t *soff;       /* (n + 1) */
    int32_t *ns_a;       /* (n) sentences of a; b's are the rest of the row's */
} HanSeqs;

/* ModelOps.encode / encoded_free of such a model (a WordModelBase first). */
Encoded *han_encode(Model *m, const Dataset *d);
void han_encoded_free(Encoded *e);

#endif
