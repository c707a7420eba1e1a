#!/usr/bin/env bash
# devsets.sh — the documentation dev sets (eval/testdata/research), every
# set at every chunk size: a knowledge base of each set's documentation
# per size, then eval ask and eval research over each, one --json run a
# set, kind and size in OUT. `quarry eval table OUT` averages them per
# set; `quarry eval table BEFORE OUT` sets two configurations side by
# side (docs/answer-quality.md).
#
#   bash eval/devsets.sh QUARRY DATA OUT [SIZES]
#
# QUARRY is the binary to measure, DATA a directory for the knowledge
# bases (DATA/d480 … one database a size, built once and kept: a second
# configuration is measured over the same ones), OUT the runs' directory.
# SIZES defaults to "480 496 512 528 544" (tokens a chunk). Environment:
# SETS (default all eight), KINDS (default "ask research"), JOBS (runs at
# once, default 2), INGEST (the binary that builds the knowledge bases,
# default QUARRY: a change to extraction or analysis needs its own), and
# ROOT_<set> to move a set's documentation (ROOT_nodejs=…). The
# documentation is Debian's (Debian 12):
#
#   apt-get install git-doc sqlite3-doc python3.11-doc rust-doc \
#     python-django-doc libreoffice-help-ko gimp-help-ko
#   apt-get download nodejs-doc && dpkg-deb -x nodejs-doc_*.deb /tmp/nodejs-doc
#
# (nodejs-doc installs only beside Debian's nodejs; its files are enough.)
set -euo pipefail

if [ $# -lt 3 ]; then
	echo "usage: $0 QUARRY DATA OUT [SIZES]" >&2
	exit 2
fi
quarry=$(realpath "$1")
data=$2
out=$3
sizes=${4:-480 496 512 528 544}
ingest=$(realpath "${INGEST:-$1}")
kinds=${KINDS:-ask research}
jobs=${JOBS:-2}
here=$(cd "$(dirname "$0")" && pwd)

declare -A root=(
	[git]=/usr/share/doc/git-doc
	[sqlite]=/usr/share/doc/sqlite3
	[python]=/usr/share/doc/python3.11/html
	[nodejs]=/tmp/nodejs-doc/usr/share/doc/nodejs/api
	[rust]=/usr/share/doc/rust-doc/html/book
	[libreoffice-ko]=/usr/share/libreoffice/help/ko
	[gimp-ko]=/usr/share/gimp/2.0/help/ko
	[django]=/usr/share/doc/python-django-doc/html
)
sets=${SETS:-git sqlite python nodejs rust libreoffice-ko gimp-ko django}
for s in $sets; do
	var=ROOT_${s//-/_}
	if [ -n "${!var:-}" ]; then
		root[$s]=${!var}
	fi
	if [ -z "${root[$s]:-}" ] || [ ! -d "${root[$s]}" ]; then
		echo "$0: set $s: documentation not found at ${root[$s]:-(no root)}; install it (see the head of this script) or set $var" >&2
		exit 2
	fi
done

mkdir -p "$out"
for n in $sizes; do
	d=$data/d$n
	mkdir -p "$d"
	for s in $sets; do
		# Built once a size: the marker is written after the add succeeds.
		if [ ! -e "$d/.built-$s" ]; then
			"$ingest" --data-dir "$d" kb add "$s" "${root[$s]}" --create --chunk-tokens "$n" >/dev/null 2>"$d/$s.ingest.log"
			touch "$d/.built-$s"
		fi
	done
	for k in $kinds; do
		printf '%s\n' $sets | xargs -P "$jobs" -I{} sh -c \
			'"$0" --data-dir "$1" eval "$2" --kb {} --dataset "$3/testdata/research/{}.jsonl" --json > "$4/{}.$2.$5.json" 2> "$4/{}.$2.$5.log"' \
			"$quarry" "$d" "$k" "$here" "$out" "$n"
	done
done
echo "runs in $out: quarry eval table $out"
