/* wordpiece.c — greedy longest-match-first WordPiece (see wordpiece.h). */
#include "text/wordpiece.h"

/* 1 if byte c starts a code point (is not a UTF-8 continuation byte). */
static int wp_is_boundary(char c) { return ((unsigned char)c & 0xC0) != 0x80; }

int wordpiece_encode_word(const Vocab *v, int unk_id, const char *word, size_t len, size_t nchars, int *ids) {
    return wordpiece_encode_word_cont(v, unk_id, word, len, nchars, 0, ids);
}

int wordpiece_encode_word_cont(const Vocab *v, int unk_id, const char *word, size_t len, size_t nchars,
                               int continuation, int *ids) {
    if (len == 0) return 0;
    if (nchars > WORDPIECE_MAX_WORD_CHARS) { ids[0] = unk_id; return 1; }
    /* No vocabulary piece is longer than this, so longer candidates are skipped
     * without a lookup (the result is the same: they could not match). */
    size_t max_piece = vocab_max_piece_bytes(v);
    int n = 0;
    for (size_t start = 0; start < len;) {
        size_t end = len - start > max_piece ? start + max_piece : len;
        int id = -1;
        for (; end > start; end--) {
            if (end < len && !wp_is_boundary(word[end])) continue;   /* only whole code points */
            id = vocab_id_piece(v, word + start, end - start, start > 0 || continuation);
            if (id >= 0) break;
        }
        if (id < 0) { ids[0] = unk_id; return 1; }
        ids[n++] = id;
        start = end;
    }
    return n;
}
