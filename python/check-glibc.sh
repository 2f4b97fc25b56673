#!/usr/bin/env bash
# Fails unless a wheel installs on glibc MAX (2.17: manylinux2014) and later: its platform
# tag, the tag auditwheel finds it consistent with, and every GLIBC_x.y symbol version it
# references must all be MAX or older.
#
#     python/check-glibc.sh AUDITWHEEL WHEEL MAX
set -euo pipefail
auditwheel="$1" wheel="$2" max="$3"

# Whether glibc version $1 is at most $max.
at_most_max() {
    [ "$(printf '%s\n%s\n' "$1" "$max" | sort -V | tail -n 1)" = "$max" ]
}

failed=0
# The file name's platform tags: manylinux2014 is glibc 2.17, manylinux_X_Y is X.Y; any
# other Linux tag (linux_x86_64, the build machine's glibc) is refused.
name="$(basename "$wheel" .whl)"
for tag in $(echo "${name##*-}" | tr '.' ' '); do
    case "$tag" in
        manylinux2014_*) version=2.17 ;;
        manylinux_*_*_*) version="$(echo "$tag" | cut -d_ -f2).$(echo "$tag" | cut -d_ -f3)" ;;
        *) echo "the wheel's platform tag $tag is no manylinux tag"; failed=1; continue ;;
    esac
    if ! at_most_max "$version"; then
        echo "the wheel's platform tag $tag needs glibc $version, newer than $max"
        failed=1
    fi
done

# auditwheel's verdict: the most compatible tag the wheel's contents allow, and the symbol
# versions it references (its output wraps lines, so it is read as one).
report="$("$auditwheel" show "$wheel" | tr '\n' ' ')"
consistent="$(echo "$report" | grep -o 'consistent with the following platform tag: *"manylinux_[0-9]*_[0-9]*' \
    | grep -o 'manylinux_[0-9]*_[0-9]*' || true)"
if [ -z "$consistent" ]; then
    echo "auditwheel found no manylinux tag for the wheel:"
    "$auditwheel" show "$wheel"
    failed=1
else
    version="$(echo "$consistent" | cut -d_ -f2).$(echo "$consistent" | cut -d_ -f3)"
    if ! at_most_max "$version"; then
        echo "auditwheel: the wheel's contents need $consistent (glibc $version), newer than $max"
        failed=1
    fi
fi
newest="$(echo "$report" | grep -o 'GLIBC_[0-9][0-9.]*[0-9]' | sed 's/GLIBC_//' | sort -uV | tail -n 1)"
if [ -z "$newest" ]; then
    echo "auditwheel listed no GLIBC symbol versions: its report is not the one this check reads"
    failed=1
elif ! at_most_max "$newest"; then
    echo "the wheel references GLIBC_$newest symbols, newer than $max:"
    echo "$report" | grep -o 'GLIBC_[0-9][0-9.]*[0-9]' | sort -uV | tr '\n' ' '
    echo
    failed=1
fi

if [ "$failed" -ne 0 ]; then
    exit 1
fi
echo "glibc: $(basename "$wheel") is $consistent, its newest symbol version GLIBC_$newest (at most $max)"
