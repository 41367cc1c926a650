#!/usr/bin/env python3
"""The ninja targets a list of tests needs, for a sanitizer pass over part of the suite
(tests/sanitize.sh with TESTS=...): each test's program and declared dependencies, and what
every test may load at run time without declaring it: the plugins, plexus-plugin-check and
the plexus command. usage: targets.py BUILD_DIR TEST_NAME..."""
import json
import os
import subprocess
import sys


def introspect(build, what):
    out = subprocess.run(['meson', 'introspect', build, what], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    build, names = os.path.abspath(sys.argv[1]), set(sys.argv[2:])
    targets = introspect(build, '--targets')
    by_id = {t['id']: t for t in targets}
    wanted = set()
    found = set()
    for test in introspect(build, '--tests'):
        if test['name'] not in names:
            continue
        found.add(test['name'])
        for dep in test.get('depends', []):
            wanted.update(by_id[dep]['filename'] if dep in by_id else [])
        program = test['cmd'][0]
        if program.startswith(build + os.sep):
            wanted.add(program)
    missing = names - found
    if missing:
        sys.exit('targets.py: no such test: ' + ', '.join(sorted(missing)))
    for t in targets:
        loaded_at_run_time = t['type'] == 'shared module' and '/plugins/' in t['filename'][0]
        if loaded_at_run_time or t['name'] in ('plexus', 'plexus-plugin-check'):
            wanted.update(t['filename'])
    print(' '.join(sorted(os.path.relpath(f, build) for f in wanted)))


if __name__ == '__main__':
    main()
