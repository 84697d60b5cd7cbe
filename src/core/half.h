/* half.h — IEEE binary16 (fp16) and bfloat16 <-> float conversions, bit exact:
 * round-to-nearest-even on the way down (as numpy, PyTorch and the F16C
 * instructions do), exact on the way up. Pure integer code, so the result does
 * not depend on the thread's FTZ/DAZ mode. Checkpoints may store f16 to halve
 * shipped models; safetensors files from Hugging Face come in f16 and bf16. */
#ifndef GLUE_HALF_H
#define GLUE_HALF_H

#include <stddef.h>
#include <stdint.h>

uint16_t half_from_float(float f);
float half_to_float(uint16_t h);
uint16_t bf16_from_float(float f);
float bf16_to_float(uint16_t h);

/* Whole arrays: dst (n) from src (n). */
void half_from_float_array(uint16_t *dst, const float *src, size_t n);
void half_to_float_array(float *dst, const uint16_t *src, size_t n);
void bf16_from_float_array(uint16_t *dst, const float *src, size_t n);
void bf16_to_float_array(float *dst, const uint16_t *src, size_t n);

#endif
