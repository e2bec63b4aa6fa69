# Used by t_completion.sh.
# Prints zsh's completion candidates for each command line read from stdin (its last word is
# completed; a line ending in a space completes an empty word), one line of sorted candidates
# per command line. Drives one real interactive zsh in a pseudo-terminal (zpty): compinit with
# the completion directory $1 on fpath, compadd wrapped to print what it is given, then TAB
# per command line, ending each with a marker and clearing the line. Exits 1 (saying which
# line) if the inner zsh never answers a command line: its output stops, and what it printed
# until then is not an answer.
zmodload zsh/zpty || { print -u2 'zsh has no zpty module'; exit 1 }
typeset dir=$1 dump=${ZCOMPDUMP:-${TMPDIR:-/tmp}/shardctl-zcompdump.$$} out chunk line
zpty z zsh -f -i
zpty -w z "PROMPT= ; fpath=(${(q)dir} \$fpath); autoload -Uz compinit; compinit -u -d ${(q)dump}"
zpty -w z 'compadd () {
  [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]] && { builtin compadd "$@"; return $? }
  typeset -a __hits; builtin compadd -A __hits "$@"; (( $#__hits )) || return 1
  local h; for h in $__hits; do print -r -- "@@C:$h"; done
}'
zpty -w z "__tab () { zle complete-word; print -r -- '@@''END' }; zle -N __tab; bindkey '^I' __tab"
zpty -w z "print -r -- '@@''READY'"
out=
while [[ $out != *@@READY* ]] && zpty -r z chunk; do out+=$chunk; done
[[ $out == *@@READY* ]] || { print -u2 "zsh_complete: the inner zsh never started: $out"; zpty -d z 2>/dev/null; exit 1 }
while IFS= read -r line; do
  zpty -n -w z "$line"$'\t'
  out=
  while [[ $out != *@@END* ]] && zpty -r z chunk; do out+=$chunk; done
  [[ $out == *@@END* ]] || { print -u2 "zsh_complete: no answer to [$line]: $out"; zpty -d z 2>/dev/null; rm -f -- $dump; exit 1 }
  zpty -n -w z $'\C-e\C-u'
  print -r -- ${(j: :)${(ou)${${(M)${(f)out//$'\r'/}:#*@@C:*}##*@@C:}:#*\$h*}}
done
zpty -d z 2>/dev/null
rm -f -- $dump
