#!/bin/sh
# Prints the path of a Python >= 3.12 interpreter, or explains what is missing and exits 1.
check() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null; }
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
echo "No Python >= 3.12 found (Django 6 needs it). Install python3.12 or newer, or pyenv install 3.12." >&2
exit 1
