#!/bin/sh
# Prints the path of a Python 3.12 or 3.13 interpreter (the tested versions: pyproject.toml's requires-python),
# or explains what is missing and exits 1.
check() { "$1" -c 'import sys; sys.exit(0 if (3, 12) <= sys.version_info[:2] < (3, 14) else 1)' 2>/dev/null; }
for candidate in python3.13 python3.12 python3; do
    path=$(command -v "$candidate" 2>/dev/null) || continue
    if check "$path"; then echo "$path"; exit 0; fi
done
if command -v pyenv >/dev/null 2>&1; then
    root=$(pyenv root)
    for path in "$root"/versions/3.13*/bin/python3 "$root"/versions/3.12*/bin/python3; do
        if [ -x "$path" ] && check "$path"; then echo "$path"; exit 0; fi
    done
fi
echo "No Python 3.12 or 3.13 found (Django 6 needs 3.12 or newer; the suite is tested on 3.12 and 3.13). Install python3.12 or python3.13, or pyenv install 3.13." >&2
exit 1
