/* Numbers from text the one way: an option's value, a line of a rules file. Each parses
 * the whole string (leading and trailing junk refused), checks the range, and on failure
 * leaves *out alone and returns -1, so the caller says "--count takes ..." in its words. */
#ifndef EMB_BASE_PARSE_NUMBER_H
#define EMB_BASE_PARSE_NUMBER_H

#include <stdint.h>

/* Decimal, or hexadecimal with 0x (and octal never: "010" is ten), in [min, max]. */
int emb_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
int emb_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);
/* A finite decimal number in [min, max]. */
int emb_parse_double(const char *s, double min, double max, double *out);
/* A size in bytes: a count with an optional K, M or G (powers of 1024), in [min, max]. */
int emb_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);

#endif /* EMB_BASE_PARSE_NUMBER_H */
