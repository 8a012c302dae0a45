#!/usr/bin/env python3
"""emulated_ctest.py BUILD OUT EMULATOR...: OUT/CTestTestfile.cmake holds BUILD's ctest tests
(`ctest --show-only=json-v1`) with each command that runs an ELF executable prefixed by EMULATOR
(e.g. qemu-x86_64), their properties unchanged, so that `ctest --test-dir OUT` runs the binaries
BUILD built under the emulator. Commands that start anything else (bash, python3, sh) are written
as they are: what they start runs on the host. Prints how many tests it wrote of each kind."""
import json
import os
import subprocess
import sys


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def bracket(text):
    """A CMake bracket argument holding `text` verbatim."""
    eq = "="
    while f"]{eq}]" in text:
        eq += "="
    return f"[{eq}[{text}]{eq}]"


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    build, out, emulator = sys.argv[1], sys.argv[2], sys.argv[3:]
    listing = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"], check=True,
                             capture_output=True, text=True).stdout
    root = os.path.realpath(build) + os.sep
    lines, emulated, host, unbuilt = [], 0, [], []
    for test in json.loads(listing)["tests"]:
        command = test.get("command")
        if not command:
            unbuilt.append(test["name"])  # its executable is not built
            continue
        name = test["name"]
        if os.path.realpath(command[0]).startswith(root) and is_elf(command[0]):
            command = emulator + command
            emulated += 1
        else:
            host.append(name)
        lines.append(f"add_test({bracket(name)} {' '.join(bracket(a) for a in command)})")
        props = []
        for p in test.get("properties", []):
            value = p["value"]
            if isinstance(value, list):
                value = ";".join(str(v) for v in value)
            elif isinstance(value, bool):
                value = "ON" if value else "OFF"
            props.append(f"{p['name']} {bracket(str(value))}")
        if props:
            lines.append(f"set_tests_properties({bracket(name)} PROPERTIES {' '.join(props)})")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "CTestTestfile.cmake"), "w") as f:
        f.write(f"# {build}'s tests, its executables under {' '.join(emulator)} (tests/avx2cpu/emulated_ctest.py)\n")
        f.write("\n".join(lines) + "\n")
    print(f"emulated_ctest: {emulated} tests under {' '.join(emulator)}, {len(host)} run on the host "
          f"({' '.join(sorted(host)) or 'none'}); {len(unbuilt)} left out, their executable not built "
          f"({' '.join(sorted(unbuilt)) or 'none'})")


if __name__ == "__main__":
    main()
