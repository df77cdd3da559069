/* Korean particles chosen from the value before them (util/ko_particle.h),
 * against the cases issue 17 names and the reading rules they stand for. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/ko_particle.h"
#include "util/msg.h"

static void expect(const char *in, const char *want)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", in);
    gp_ko_particles(buf);
    if (strcmp(buf, want) != 0) print_error("%s -> %s, wanted %s\n", in, buf, want);
    assert_string_equal(buf, want);
}

static gp_ko_ending ending(const char *s)
{
    return gp_ko_ending_of(s, strlen(s));
}

/* The three the issue found wrong in the catalogue. */
static void test_issue_examples(void **state)
{
    (void)state;
    expect("\"20\"(으)로 올리세요", "\"20\"으로 올리세요");               /* 이십: ㅂ */
    expect("v1.17.0(으)로 바꾸고", "v1.17.0으로 바꾸고");                 /* 영: ㅇ */
    expect("config.toml을(를) 읽지 마세요", "config.toml을 읽지 마세요"); /* 엘: ㄹ */
    /* and the forms they are told apart from */
    expect("v1.16.2(으)로", "v1.16.2로");         /* 이 */
    expect("config.toml(으)로", "config.toml로"); /* ㄹ takes 로 */
    expect("\"4\"(으)로", "\"4\"로");             /* 사 */
}

static void test_hangul_finals(void **state)
{
    (void)state;
    assert_int_equal(ending("파일"), GP_KO_RIEUL);
    assert_int_equal(ending("노드"), GP_KO_VOWEL);
    assert_int_equal(ending("값"), GP_KO_CONSONANT);
    expect("노드을(를)", "노드를");
    expect("값을(를)", "값을");
    expect("노드이(가)", "노드가");
    expect("파일이(가)", "파일이");
    expect("노드은(는)", "노드는");
    expect("파일은(는)", "파일은");
    expect("노드과(와)", "노드와");
    expect("값과(와)", "값과");
    expect("파일(으)로", "파일로");
    expect("값(으)로", "값으로");
    expect("노드(으)로", "노드로");
    /* the reversed spellings are the same particle */
    expect("값를(을) 노드가(이) 값는(은) 노드와(과) 값으로(로)", "값을 노드가 값은 노드와 값으로");
}

/* Numbers as numbers: the last non-zero digit, or the power of ten. */
static void test_numbers(void **state)
{
    (void)state;
    static const struct {
        const char *number;
        gp_ko_ending e;
    } cases[] = {
        {"0", GP_KO_CONSONANT},         /* 영 */
        {"1", GP_KO_RIEUL},             /* 일 */
        {"2", GP_KO_VOWEL},             /* 이 */
        {"3", GP_KO_CONSONANT},         /* 삼 */
        {"4", GP_KO_VOWEL},             /* 사 */
        {"5", GP_KO_VOWEL},             /* 오 */
        {"6", GP_KO_CONSONANT},         /* 육 */
        {"7", GP_KO_RIEUL},             /* 칠 */
        {"8", GP_KO_RIEUL},             /* 팔 */
        {"9", GP_KO_VOWEL},             /* 구 */
        {"10", GP_KO_CONSONANT},        /* 십 */
        {"20", GP_KO_CONSONANT},        /* 이십 */
        {"100", GP_KO_CONSONANT},       /* 백 */
        {"3000", GP_KO_CONSONANT},      /* 삼천 */
        {"40000", GP_KO_CONSONANT},     /* 사만 */
        {"1000000000000", GP_KO_VOWEL}, /* 일조 */
        {"17", GP_KO_RIEUL},            /* 십칠 */
        {"1.5", GP_KO_VOWEL},           /* 일 점 오 */
        {"1.50", GP_KO_CONSONANT},      /* 일 점 오영 */
        {"64Gi", GP_KO_VOWEL},          /* ...아이 */
        {"128Mi", GP_KO_VOWEL},
        {"0/3", GP_KO_CONSONANT}, /* 삼 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (ending(cases[i].number) != cases[i].e) print_error("%s\n", cases[i].number);
        assert_int_equal(ending(cases[i].number), cases[i].e);
    }
}

/* English words as Korean writes them; letters alone by their names. */
static void test_letters(void **state)
{
    (void)state;
    static const struct {
        const char *word;
        gp_ko_ending e;
    } cases[] = {
        {"control", GP_KO_RIEUL},           /* 컨트롤 */
        {"table", GP_KO_RIEUL},             /* 테이블 */
        {"Unschedulable", GP_KO_RIEUL},     /* 언스케줄러블 */
        {"runtime", GP_KO_CONSONANT},       /* 런타임 */
        {"none", GP_KO_CONSONANT},          /* 논 */
        {"boolean", GP_KO_CONSONANT},       /* 불리언 */
        {"string", GP_KO_CONSONANT},        /* 스트링 */
        {"Running", GP_KO_CONSONANT},       /* 러닝 */
        {"docker", GP_KO_VOWEL},            /* 도커 */
        {"nvidia", GP_KO_VOWEL},            /* 엔비디아 */
        {"runc", GP_KO_VOWEL},              /* 런씨 */
        {"containerd", GP_KO_VOWEL},        /* 컨테이너디 */
        {"runtimes", GP_KO_VOWEL},          /* 런타임스 */
        {"true", GP_KO_VOWEL},              /* 트루 */
        {"false", GP_KO_VOWEL},             /* 폴스 */
        {"note", GP_KO_VOWEL},              /* 노트 */
        {"v", GP_KO_VOWEL},                 /* 브이 */
        {"l", GP_KO_RIEUL},                 /* 엘 */
        {"TOML", GP_KO_RIEUL},              /* 티오엠엘 */
        {"RAM", GP_KO_CONSONANT},           /* 알에이엠 */
        {"GPU", GP_KO_VOWEL},               /* 지피유 */
        {"ISOLATION", GP_KO_CONSONANT},     /* a word: 아이솔레이션 */
        {"SystemdCgroup", GP_KO_CONSONANT}, /* ...그룹 */
        {"setup", GP_KO_CONSONANT},         /* 셋업 */
        {"toolkit", GP_KO_CONSONANT},       /* 툴킷 */
        {"book", GP_KO_CONSONANT},          /* 북 */
        {"script", GP_KO_VOWEL},            /* 스크립트 */
        {"check", GP_KO_VOWEL},             /* 체크 */
        {"boot", GP_KO_VOWEL},              /* 부트 */
        {"type", GP_KO_VOWEL},              /* a silent e: 타이프 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (ending(cases[i].word) != cases[i].e) print_error("%s\n", cases[i].word);
        assert_int_equal(ending(cases[i].word), cases[i].e);
    }
    expect("nvidia을(를)", "nvidia를");
    expect("ISOLATION=none이(가)", "ISOLATION=none이");
    expect("runc(으)로", "runc로");
    expect("lab-node-1(으)로", "lab-node-1로"); /* 일 */
}

/* What stands between the value and the particle, and what is not a value. */
static void test_closers_and_edges(void **state)
{
    (void)state;
    expect("`config.toml`을(를)", "`config.toml`을");
    expect("'runc'(으)로", "'runc'로");
    expect("[plugins.\"io.containerd.grpc.v1.cri\"](으)로",
           "[plugins.\"io.containerd.grpc.v1.cri\"]로");
    expect("(20)(으)로", "(20)으로");
    /* an aside after a word: the word takes the particle */
    expect("'ds_request_gib'(16)은(는)", "'ds_request_gib'(16)는");
    expect("드롭인 버전(3)이(가)", "드롭인 버전(3)이");
    expect("%s (pid 42)이(가)", "%s (pid 42)가"); /* s: 에스 */
    expect("값 (a (b))을(를)", "값 (a (b))을");
    expect("“값”을(를)", "“값”을");
    /* nothing before it, or a symbol: the vowel form */
    expect("을(를)", "를");
    expect("conf.d/*(으)로", "conf.d/*로");
    /* text without a marker is untouched, parentheses included */
    expect("값 (기본값) 은 4", "값 (기본값) 은 4");
    expect("plain English (or not)", "plain English (or not)");
    /* a value that ends in a byte that is not UTF-8 */
    expect("\xff을(를)", "\xff를");
    /* a stray continuation byte after a digit is not the digit (make fuzz
     * found the digit read as the table index of the byte) */
    expect("0\xbc을(를)", "0\xbc를");
    expect("3\x80\x80(으)로", "3\x80\x80로");
    /* an overlong form of a digit ("\xc0\xb5" would be "5") is no digit
     * either (make fuzz again: the byte before it was read as the digit) */
    expect("m\xc0\xb5을(를)", "m\xc0\xb5를");
    expect("7\xe0\x80\xb1(으)로", "7\xe0\x80\xb1로");
    /* several in one sentence, each by its own value */
    expect("20(으)로 v1.16.2(으)로 파일을(를) 노드을(를)", "20으로 v1.16.2로 파일을 노드를");
}

/* The formatting helpers choose after formatting, from the value filled in. */
static void test_msg_formats_then_chooses(void **state)
{
    (void)state;
    char buf[128];
    gp_msg_snprintf(buf, sizeof buf, "%s(으)로 바꾸세요", "v1.17.0");
    assert_string_equal(buf, "v1.17.0으로 바꾸세요");
    gp_msg_snprintf(buf, sizeof buf, "%s(으)로 바꾸세요", "v1.16.2");
    assert_string_equal(buf, "v1.16.2로 바꾸세요");
    char *s = gp_msg_asprintf("\"%d\"(으)로", 20);
    assert_string_equal(s, "\"20\"으로");
    free(s);
    gp_error err = {0};
    gp_error_set(&err, "f", 0, 0, "%s을(를) 읽을 수 없습니다", "config.toml");
    assert_string_equal(err.text, "f: config.toml을 읽을 수 없습니다");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_issue_examples),    cmocka_unit_test(test_hangul_finals),
        cmocka_unit_test(test_numbers),           cmocka_unit_test(test_letters),
        cmocka_unit_test(test_closers_and_edges), cmocka_unit_test(test_msg_formats_then_chooses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
