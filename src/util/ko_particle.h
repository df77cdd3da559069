/* Korean particles after a value, chosen from the value.
 *
 * A Korean particle takes one of two forms by the sound that ends the word
 * before it: 을/를, 이/가, 은/는, 과/와, and 으로/로 (로 also after ㄹ). A
 * translation cannot fix it, because the word is a value filled in at run
 * time ("20", "v1.17.0", "config.toml"). So the Korean catalogue writes both
 * forms the way Korean manuals do, 을(를), 이(가), 은(는), 과(와), (으)로,
 * and gp_ko_particles() picks one after the text is formatted, from how a
 * Korean reader reads the end of the value: a Hangul syllable by its final
 * consonant, a number as a number ("20" is 이십, ending in ㅂ; "0" is 영), an
 * English word as Korean writes it (toml, 토믈, ends in ㄹ; runtime, 런타임,
 * in ㅁ; docker, 도커, in a vowel), a letter alone or a short capital acronym
 * by the letters' Korean names (v is 브이; TOML ends in 엘). Closing quotes and brackets between
 * the value and the particle are skipped: `"20"(으)로` reads the 0. */
#ifndef GPUOP_UTIL_KO_PARTICLE_H
#define GPUOP_UTIL_KO_PARTICLE_H

#include <stddef.h>

/* How the text before a particle ends, as read aloud. */
typedef enum gp_ko_ending {
    GP_KO_VOWEL,    /* no final consonant: 를, 가, 는, 와, 로 */
    GP_KO_RIEUL,    /* final ㄹ: 을, 이, 은, 과, but 로 */
    GP_KO_CONSONANT /* another final consonant: 을, 이, 은, 과, 으로 */
} gp_ko_ending;

/* The ending of text[0..len): what a Korean reader hears last. Text that
 * ends in something unread (a symbol, nothing) counts as a vowel. */
gp_ko_ending gp_ko_ending_of(const char *text, size_t len);

/* Replaces, in place, every two-form particle in `text` with the form its
 * preceding value takes. The result is never longer than the input. */
void gp_ko_particles(char *text);

#endif
