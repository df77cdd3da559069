#!/usr/bin/env bats
# Every message a learner reads exists in Korean and Japanese (issue 17): the
# grader's titles, hints and fixed words over the whole accuracy corpus, and
# what `lab steps`, `check` (text, JSON, JUnit), `status`, `solve` and the
# lab's errors print. A run in ko or ja with English left outside values
# fails (tests/cli/untranslated.py says what counts). Korean particles after
# values are the value's (util/ko_particle.h). No cluster: the cluster steps'
# texts come from the corpus' recorded states; lab.bats checks the CLI's
# cluster-step output in both languages.

setup_file() {
    : "${LAB_CORPUS_BIN:?set LAB_CORPUS_BIN to test_lab_corpus}"
    export T=$BATS_FILE_TMPDIR
    export HOME=$T/home
    mkdir -p "$HOME"
    export CHECK="python3 $GPUOP_SRC/tests/cli/untranslated.py"
}

# The output of a lab command in LANG (C.UTF-8 is the only locale here).
in_lang() {
    local lang=$1
    shift
    env LANG="$lang" "$GPUOP" lab "$@"
}

@test "the grader speaks Korean and Japanese over the whole corpus" {
    for lang in en ko ja; do
        rm -f "$T/$lang.jsonl"
        env LAB_CORPUS_LANGUAGE=$([ $lang = en ] || echo $lang) LAB_CORPUS_RESULTS="$T/$lang.jsonl" \
            "$LAB_CORPUS_BIN" >"$T/$lang.log" 2>&1 || { cat "$T/$lang.log"; false; }
    done
    [ "$(wc -l <"$T/en.jsonl")" -ge 130 ]
    $CHECK corpus ko "$T/en.jsonl" "$T/ko.jsonl"
    $CHECK corpus ja "$T/en.jsonl" "$T/ja.jsonl"
}

@test "the checker finds what issue 17 found: English words in a Korean run" {
    # The detector itself: the three leaks the issue quotes, and values it must leave.
    run $CHECK text ko <<<'      찾은 값: absent'
    [ "$status" -eq 1 ]
    run $CHECK text ko <<<'      찾은 값: still running after 5 s: killed'
    [ "$status" -eq 1 ]
    run $CHECK text ko <<<'      기대값: lab-node-1 20 (or <none>, before step 7)'
    [ "$status" -eq 1 ]
    run $CHECK text ko <<<'      찾은 값: "0/3 nodes are available: 3 Insufficient nvidia.com/gpu." REPLICAS=5 containerd config dump'
    [ "$status" -eq 0 ]
}

@test "steps, check in three formats, status, solve and errors: no English in ko or ja" {
    R=$T/ws
    "$GPUOP" lab init --root "$R" >/dev/null
    # a state with a mistake in each file step
    "$GPUOP" lab solve 4 --root "$R" >/dev/null
    sed -i 's/SystemdCgroup = true/SystemdCgroup = "true"/' "$R/etc/containerd/config.toml"
    sed -i 's/CONFLICT=yes/CONFLICT=true/' "$R/out/merge.txt"
    printf '#!/bin/sh\ncontainerd config dump | grep -q nvidia\n' >"$R/bin/check-runtime.sh"
    rm "$R/etc/containerd/conf.d/99-nvidia.toml"
    for lang in ko_KR.UTF-8 ja_JP.UTF-8; do
        short=${lang%%_*}
        : >"$T/all.$short"
        for args in "steps" "check" "status" "check 9" \
                    "init --root /" "status --root $T/nowhere" "reset --root $HOME"; do
            # shellcheck disable=SC2086
            in_lang "$lang" $args --root "$R" >>"$T/all.$short" 2>&1 || true
        done
        in_lang "$lang" solve 3 --root "$R" >>"$T/all.$short" 2>&1 || true
        in_lang "$lang" --help >>"$T/all.$short" 2>&1 || true
        for o in json junit; do
            in_lang "$lang" check -o $o --root "$R" >"$T/$o.$short" || true
            run $CHECK $o "$short" <"$T/$o.$short"
            echo "$output"
            [ "$status" -eq 0 ]
        done
        # the JSON's titles and hints are the reader's language too
        in_lang "$lang" check -o json --root "$R" | python3 -c '
import json, sys
doc = json.load(sys.stdin)
for s in doc["steps"]:
    assert any(ord(ch) > 0x3000 for ch in s["title"]), s["title"]
    for c in s["conditions"]:
        assert not c["hint"] or any(ord(ch) > 0x3000 for ch in c["hint"]), c'
        run $CHECK text "$short" <"$T/all.$short"
        echo "$output"
        [ "$status" -eq 0 ]
        # and it is that language: hangul or kana on most lines
        python3 -c 'import sys; t = open(sys.argv[1]).read(); assert sum(ord(c) > 0x3000 for c in t) > 2000, len(t)' "$T/all.$short"
    done
}

@test "Korean particles after values are the values': \"20\"으로, v1.17.0으로, config.toml을" {
    R=$T/ws
    run in_lang ko_KR.UTF-8 steps --root "$R"
    [ "$status" -eq 0 ]
    [[ "$output" == *'"20"으로 올리세요'* ]]
    [[ "$output" == *'v1.17.0으로 바꾸고'* ]]
    [[ "$output" != *'"20" 로'* && "$output" != *'v1.17.0 로'* ]]
    # no particle left in its two-form spelling
    [[ "$output" != *'(으)로'* && "$output" != *'을(를)'* && "$output" != *'이(가)'* && "$output" != *'은(는)'* ]]
    # a seed whose numbers end otherwise: 5 x 4 = 20 again would not tell
    "$GPUOP" lab init --root "$T/seed" --seed 3 >/dev/null
    adv=$(python3 -c 'import json,sys; p = json.load(open(sys.argv[1])); print(p["gpus_per_node"] * p["replicas"])' "$T/seed/.gpuop-lab.json")
    run in_lang ko_KR.UTF-8 steps 7 --root "$T/seed"
    want=$(python3 - "$adv" <<'PY'
import sys
n = int(sys.argv[1])
# 일 칠 팔 end in ㄹ and 이 사 오 구 in a vowel: 로; anything else (영 삼 육 십 ...): 으로
last = str(n).rstrip("0")
print("로" if n % 10 in (1, 2, 4, 5, 7, 8, 9) else "으로")
PY
)
    [[ "$output" == *"\"$adv\"$want 올리세요"* ]]
}
