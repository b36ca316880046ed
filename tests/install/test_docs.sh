#!/usr/bin/env bash
# The installed man pages and bash completion (tools/man/emb_docs.py, `make install`):
#   - `man -l` renders emb.1 and each emb-CMD.1 with groff's warnings on, and none appears;
#     each page has its NAME (emb-CMD - summary) and SYNOPSIS, and names every option
#     its --help does;
#   - a bash that sources the installed completion says `complete -F _emb emb`, completes
#     the commands after `emb`, and after `emb CMD --` offers every `--option` that
#     `emb help CMD` names and the command accepts (a name it does not know would be
#     "unknown option"), so completion and --help cannot drift apart.
# usage: test_docs.sh PREFIX   (an installed tree: PREFIX/bin/emb, PREFIX/share/...)
set -uo pipefail
export LC_ALL=C.UTF-8
prefix=$1
emb=$prefix/bin/emb
man1=$prefix/share/man/man1
completion=$prefix/share/bash-completion/completions/emb
fails=0
ok() { if [ "$1" = 0 ]; then echo "ok - $2"; else echo "not ok - $2"; fails=$((fails + 1)); fi; }

commands=$("$emb" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF > 1 && $1 != "Commands:" {print $1}')
[ -n "$commands" ]; ok $? "emb --help lists the commands"

for page in emb $(printf 'emb-%s ' $commands); do
    f=$man1/$page.1
    text=$(MANWIDTH=100 MAN_KEEP_FORMATTING= man --warnings -l "$f" 2>"$f.err" | col -b) || true
    [ -s "$f" ] && [ ! -s "$f.err" ]; ok $? "man -l $page.1 renders without warnings $(head -c 300 "$f.err")"
    rm -f "$f.err"
    grep -q "^NAME" <<<"$text" && grep -q "^SYNOPSIS" <<<"$text" && grep -q "^ *$page - " <<<"$text"
    ok $? "$page.1 has NAME ($page - ...) and SYNOPSIS"
done

# What bash offers for the words "$@" (the last one being completed).
complete_words() {
    bash --norc --noprofile -c '
        source "$0"
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
        _emb
        printf "%s\n" "${COMPREPLY[@]}"' "$completion" "$@"
}

spec=$(bash --norc --noprofile -c 'source "$0"; complete -p emb' "$completion")
[ "$spec" = "complete -F _emb emb" ]; ok $? "complete -p emb: $spec"

offered=$(complete_words emb "" | sort | tr '\n' ' ')
want=$(printf '%s\n' $commands help --help --version | sort | tr '\n' ' ')
[ "$offered" = "$want" ]; ok $? "emb <TAB> offers the commands ($offered)"

for cmd in $commands; do
    offered=$(complete_words emb "$cmd" -- | sort -u)
    page=$(MANWIDTH=200 man -l "$man1/emb-$cmd.1" 2>/dev/null | col -b)
    missing=
    for opt in $("$emb" help "$cmd" | grep -oE -- '(^|[^a-z0-9-])--[a-z][a-z0-9-]*' | grep -oE -- '--[a-z0-9-]+' | sort -u); do
        # Asked as the generator asks; read whole, as pipefail would take emb's status.
        said=$(timeout 5 "$emb" "$cmd" "$opt" </dev/null 2>&1)
        if grep -q "unknown option" <<<"$said"; then
            continue # prose naming another command's option
        fi
        grep -qx -- "$opt" <<<"$offered" || missing="$missing $opt"
        grep -q -- "$opt" <<<"$page" || missing="$missing man:$opt"
    done
    [ -z "$missing" ]; ok $? "emb $cmd --<TAB> offers every option its --help names${missing:+, missing:$missing}"
done

echo "$fails failed"
[ "$fails" = 0 ]
