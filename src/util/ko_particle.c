#include "util/ko_particle.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The code point that ends text[0..*len), stepping *len back over it; 0 at
 * the start. A byte that is not valid UTF-8 reads as itself. */
static uint32_t last_code_point(const char *text, size_t *len)
{
    if (*len == 0) return 0;
    size_t i = *len - 1;
    while (i > 0 && ((unsigned char)text[i] & 0xc0) == 0x80 && *len - i < 4)
        i--;
    const unsigned char *s = (const unsigned char *)text + i;
    size_t n = *len - i;
    uint32_t cp = s[0];
    if (n == 2 && (s[0] & 0xe0) == 0xc0)
        cp = ((uint32_t)(s[0] & 0x1f) << 6) | (s[1] & 0x3f);
    else if (n == 3 && (s[0] & 0xf0) == 0xe0)
        cp = ((uint32_t)(s[0] & 0x0f) << 12) | ((uint32_t)(s[1] & 0x3f) << 6) | (s[2] & 0x3f);
    else if (n == 4 && (s[0] & 0xf8) == 0xf0)
        cp = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3f) << 12) |
             ((uint32_t)(s[2] & 0x3f) << 6) | (s[3] & 0x3f);
    else
        n = 0;
    /* An overlong form ("\xc0\xb5" for "5") is no character either: read
     * as a digit, it would send the caller to a byte that is not one. */
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (n == 0 || (n > 1 && cp < least[n])) {
        /* Not a whole character: the last byte alone, which is no letter
         * or digit (a stray continuation byte after "0" is not the 0). */
        i = *len - 1;
        cp = (unsigned char)text[i];
    }
    *len = i;
    return cp;
}

/* Quotes and brackets that close a value are not read aloud. */
static bool is_closer(uint32_t cp)
{
    return cp == '"' || cp == '\'' || cp == '`' || cp == ')' || cp == ']' || cp == '}' ||
           cp == '>' || cp == 0x2019 /* ’ */ || cp == 0x201d /* ” */ || cp == 0x300d /* 」 */ ||
           cp == 0x300f /* 』 */;
}

/* A precomposed syllable by its final consonant (jongseong index 8 is ㄹ). */
static gp_ko_ending syllable_ending(uint32_t cp)
{
    unsigned final = (cp - 0xac00) % 28;
    return final == 0 ? GP_KO_VOWEL : final == 8 ? GP_KO_RIEUL : GP_KO_CONSONANT;
}

/* A lone consonant letter is read by its name, each ending in a consonant
 * (기역, 니은, ...); ㄹ is 리을. */
static gp_ko_ending jamo_ending(uint32_t cp)
{
    return cp == 0x3139 ? GP_KO_RIEUL : GP_KO_CONSONANT;
}

/* A Latin letter alone (or in a short capital acronym: GPU, TOML) is read
 * by its Korean name: 엘 and 알 end in ㄹ, 엠 and 엔 in another consonant,
 * every other name in a vowel (에이, 비, 씨, ..., 에스). */
static gp_ko_ending letter_name_ending(char c)
{
    switch (c | 0x20) {
    case 'l':
    case 'r':
        return GP_KO_RIEUL;
    case 'm':
    case 'n':
        return GP_KO_CONSONANT;
    default:
        return GP_KO_VOWEL;
    }
}

static bool is_vowel_letter(char c)
{
    return strchr("aeiouy", c | 0x20) != NULL;
}

static char lower(char c)
{
    return (char)(c | 0x20);
}

/* A final p, t or k after a short vowel is written as a final consonant
 * (외래어 표기법: group 그룹, kit 킷, book 북); after a long vowel or a
 * consonant it takes 으 (boot 부트, script 스크립트, check 체크). Short is
 * read from the spelling: one vowel letter, or the oo of book and the ou of
 * group. `i` is the final letter's index. */
static bool short_vowel_before(const char *w, size_t i)
{
    size_t vowels = 0;
    while (vowels < i && is_vowel_letter(w[i - 1 - vowels]))
        vowels++;
    if (vowels == 1) return true;
    if (vowels == 2) {
        char a = lower(w[i - 2]), b = lower(w[i - 1]), last = lower(w[i]);
        return (a == 'o' && b == 'o' && last == 'k') || (a == 'o' && b == 'u' && last == 'p');
    }
    return false;
}

/* An English word is read as Korean writes it: a final l as ㄹ (toml, 토믈;
 * table, 테이블), a final m, n or ng as that consonant (item, json, string),
 * a final p, t or k after a short vowel too (SystemdCgroup, 그룹; toolkit,
 * 툴킷), a silent e as the consonant before it (runtime, none; but note,
 * 노트), and every other ending with a vowel (docker, 도커; runc, 런씨). */
static gp_ko_ending word_ending(const char *w, size_t n)
{
    bool silent_e = false;
    if (lower(w[n - 1]) == 'e' && n >= 2 && !is_vowel_letter(w[n - 2])) {
        silent_e = true;
        n--;
    }
    char last = lower(w[n - 1]);
    if (last == 'l') return GP_KO_RIEUL;
    if (last == 'm' || last == 'n' || (last == 'g' && n >= 2 && lower(w[n - 2]) == 'n'))
        return GP_KO_CONSONANT;
    if (!silent_e && (last == 'p' || last == 't' || last == 'k') && short_vowel_before(w, n - 1))
        return GP_KO_CONSONANT;
    return GP_KO_VOWEL;
}

static bool is_letter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* The letters that end text[0..end). */
static gp_ko_ending letters_ending(const char *text, size_t end)
{
    size_t start = end;
    while (start > 0 && is_letter(text[start - 1]))
        start--;
    size_t n = end - start;
    bool capitals = true;
    for (size_t i = start; i < end; i++)
        capitals = capitals && text[i] >= 'A' && text[i] <= 'Z';
    if (n == 1 || (capitals && n <= 4)) return letter_name_ending(text[end - 1]);
    return word_ending(text + start, n);
}

/* The digits that end a number, read as Korean reads numbers: the last
 * non-zero digit by its name (일 ends in ㄹ, 삼 in ㅁ, 이 in a vowel, ...),
 * or, with zeros after it, the power of ten they make (십, 백, 천, 만, 억 end
 * in a consonant; 조, 10^12, in a vowel). Zero alone, and the digits after
 * a decimal point, are read one by one: 영 ends in ㅇ. */
static gp_ko_ending number_ending(const char *text, size_t start, size_t end)
{
    static const gp_ko_ending digit[10] = {
        GP_KO_CONSONANT, /* 영 */
        GP_KO_RIEUL,     /* 일 */
        GP_KO_VOWEL,     /* 이 */
        GP_KO_CONSONANT, /* 삼 */
        GP_KO_VOWEL,     /* 사 */
        GP_KO_VOWEL,     /* 오 */
        GP_KO_CONSONANT, /* 육 */
        GP_KO_RIEUL,     /* 칠 */
        GP_KO_RIEUL,     /* 팔 */
        GP_KO_VOWEL,     /* 구 */
    };
    size_t zeros = 0;
    while (end - zeros > start && text[end - zeros - 1] == '0')
        zeros++;
    if (zeros == 0) return digit[text[end - 1] - '0'];
    /* Digits after a decimal point are read one by one ("1.50" ends in 영). */
    bool fraction =
        start > 1 && text[start - 1] == '.' && text[start - 2] >= '0' && text[start - 2] <= '9';
    if (zeros == end - start || fraction) return GP_KO_CONSONANT;
    return zeros >= 12 && zeros <= 15 ? GP_KO_VOWEL : GP_KO_CONSONANT;
}

/* Before a parenthesis that closes at text[len - 1]: the length of what
 * precedes its opening one (blanks before it left out), or `len` itself
 * when it opens nothing or nothing precedes it. */
static size_t before_aside(const char *text, size_t len)
{
    size_t depth = 0, i = len;
    while (i > 0) {
        char c = text[--i];
        if (c == ')') depth++;
        if (c == '(' && --depth == 0) break;
    }
    if (depth != 0) return len;
    while (i > 0 && text[i - 1] == ' ')
        i--;
    return i > 0 ? i : len;
}

gp_ko_ending gp_ko_ending_of(const char *text, size_t len)
{
    /* A parenthesised aside after a word leaves the particle to the word:
     * 'ds_request_gib'(16)는, 버전(3)이. */
    if (len > 0 && text[len - 1] == ')') {
        size_t before = before_aside(text, len);
        if (before < len) return gp_ko_ending_of(text, before);
    }
    uint32_t cp;
    do
        cp = last_code_point(text, &len);
    while (cp && is_closer(cp));
    if (cp >= 0xac00 && cp <= 0xd7a3) return syllable_ending(cp);
    if (cp >= 0x3131 && cp <= 0x314e) return jamo_ending(cp);
    if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z')) return letters_ending(text, len + 1);
    if (cp >= '0' && cp <= '9') {
        size_t start = len; /* len now points at the last digit */
        while (start > 0 && text[start - 1] >= '0' && text[start - 1] <= '9')
            start--;
        return number_ending(text, start, len + 1);
    }
    return GP_KO_VOWEL;
}

/* A two-form particle as the catalogue writes it, and its two forms. */
typedef struct particle {
    const char *marker;
    const char *after_consonant; /* also after ㄹ, except for (으)로 */
    const char *after_vowel;
    bool rieul_takes_vowel_form; /* (으)로: 로 after ㄹ */
} particle;

static const particle particles[] = {
    {"을(를)", "을", "를", false},    {"를(을)", "을", "를", false}, {"이(가)", "이", "가", false},
    {"가(이)", "이", "가", false},    {"은(는)", "은", "는", false}, {"는(은)", "은", "는", false},
    {"과(와)", "과", "와", false},    {"와(과)", "과", "와", false}, {"(으)로", "으로", "로", true},
    {"으로(로)", "으로", "로", true},
};

static const particle *particle_at(const char *s)
{
    for (size_t i = 0; i < sizeof particles / sizeof *particles; i++)
        if (strncmp(s, particles[i].marker, strlen(particles[i].marker)) == 0) return &particles[i];
    return NULL;
}

void gp_ko_particles(char *text)
{
    /* Copies forward over itself: every form is shorter than its marker,
     * so what is written never passes what is still to read. The ending
     * is read from what was already written, particles included. */
    char *out = text;
    for (const char *in = text; *in;) {
        const particle *p = (unsigned char)*in >= 0x80 || *in == '(' ? particle_at(in) : NULL;
        if (!p) {
            *out++ = *in++;
            continue;
        }
        gp_ko_ending e = gp_ko_ending_of(text, (size_t)(out - text));
        bool vowel_form = e == GP_KO_VOWEL || (e == GP_KO_RIEUL && p->rieul_takes_vowel_form);
        const char *form = vowel_form ? p->after_vowel : p->after_consonant;
        size_t n = strlen(form);
        memmove(out, form, n);
        out += n;
        in += strlen(p->marker);
    }
    *out = '\0';
}
