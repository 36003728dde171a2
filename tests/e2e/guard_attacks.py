#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Run every attack row of tests/unit/guard_table.tsv for real under bash, as the agent's uid, in a
# fresh scratch workspace, and check its effect happened: so each deny the unit test pins is a
# deny of something that works. Programs that would reach the network or install packages are
# traced (a shim on PATH logs its argv; git's shim then runs the real git against a local
# "remote" under @O). Usage: guard_attacks.py PROCTOR TABLE [UID]. Prints one line per failure
# and a summary; exit 1 when any attack did not take effect.
import os
import shutil
import subprocess
import sys
import tempfile

PROCTOR, TABLE = sys.argv[1], sys.argv[2]
UID = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
TRACED = ("wget pipenv glab npm pnpm yarn bun npx pnpx bunx uvx pip pip3 pip3.11 uv pipx poetry pdm conda mamba micromamba cargo go gem "
          "bundle apt apt-get dpkg rpm dnf yum apk brew composer dotnet deno corepack rustup gh cpanm unknownwrapper").split()


def unescape(s):
    out, i = [], 0
    while i < len(s):
        if s[i] == '\\' and i + 1 < len(s) and s[i + 1] in 'nt\\':
            out.append({'n': '\n', 't': '\t', '\\': '\\'}[s[i + 1]])
            i += 2
        else:
            out.append(s[i])
            i += 1
    return ''.join(out)


def sh(cmd, cwd=None):
    subprocess.run(cmd, shell=True, check=True, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def template(base):
    """The workspace of tests/unit/test_guard.c, plus what the attacks run against."""
    W, O, T = base + '/ws', base + '/out', base + '/trace'
    for d in (W, W + '/sub', W + '/d', W + '/.claude/skills', O, O + '/d', T, base + '/home'):
        os.makedirs(d, exist_ok=True)
    files = {
        'a.txt': 'a\n', 'b.txt': 'b\n', 'input.txt': 'x\n', 'pkg.json': '{"name": "p"}\n',
        'evil.sh': '#!/bin/sh\ntouch %s/evil\n' % O, 'good.sh': '#!/bin/sh\necho hi > out.txt\n',
        'evil.py': "open('%s/pyhole', 'w').write('x')\n" % O,
        'evil.js': "require('fs').writeFileSync('%s/jshole', 'x')\n" % O,
        'a.patch': '--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-a\n+A\n', 'mk': 'all:\n\ttouch made\n',
        '.claude/settings.local.json': '{"hooks": {}}\n', '.claude/skills/.proctor-guard.json': '{}\n',
        '.claude/skills/.proctor-guard.manifest.json': '{}\n',
    }
    for name, text in files.items():
        with open(os.path.join(W, name), 'w') as f:
            f.write(text)
    os.chmod(W + '/evil.sh', 0o755)
    os.chmod(W + '/good.sh', 0o755)
    with open(O + '/f', 'w') as f:
        f.write('outside\n')
    os.symlink(O, W + '/outlink')
    os.symlink('sub', W + '/inlink')
    os.symlink(O + '/newfile', W + '/danglink')
    sh('tar cf t.tar a.txt && zip -q z.zip a.txt', cwd=W)
    git = 'git -c init.defaultBranch=main -c user.name=t -c user.email=t@t'
    sh('%s init -q && %s add a.txt b.txt && %s commit -q -m init' % (git, git, git), cwd=W)
    sh('git init -q --bare %s/remote.git && git remote add origin %s/remote.git && git push -q -u origin main'
       % (O, O), cwd=W)
    sh('git config user.name t && git config user.email t@t && echo c > c.txt && git add c.txt && '
       'git commit -q -m second', cwd=W)  # one commit the "remote" does not have, so a push changes it
    with open(base + '/home/.gitconfig', 'w') as f:  # let submodules use a local path, as a network URL would
        f.write('[protocol "file"]\n\tallow = always\n[safe]\n\tdirectory = *\n')
    for mod in ('pip', 'ensurepip'):  # python3 -m pip / ensurepip are traced too
        os.makedirs('%s/pylib/%s' % (base, mod))
        open('%s/pylib/%s/__init__.py' % (base, mod), 'w').close()  # a regular package wins over the real one
        with open('%s/pylib/%s/__main__.py' % (base, mod), 'w') as f:
            f.write('import sys\nopen(%r, "a").write("%s " + " ".join(sys.argv[1:]) + "\\n")\n' % (base + '/trace.log', mod))
    log = base + '/trace.log'
    for name in TRACED:
        with open(os.path.join(T, name), 'w') as f:
            f.write('#!/bin/sh\necho "%s $*" >> %s\n' % (name, log))
        os.chmod(os.path.join(T, name), 0o755)
    with open(T + '/git', 'w') as f:
        f.write('#!/bin/sh\necho "git $*" >> %s\nexec /usr/bin/git "$@"\n' % log)
    with open(T + '/sudo', 'w') as f:  # no sudo here: run the command as it would
        f.write('#!/bin/sh\necho "sudo $*" >> %s\nwhile [ $# -gt 0 ]; do case $1 in -u|-g|-C) '
                'shift 2;; -D) cd "$2"; shift 2;; -*) shift;; *) break;; esac; done\nexec "$@"\n' % log)
    os.chmod(T + '/git', 0o755)
    os.chmod(T + '/sudo', 0o755)
    os.symlink(PROCTOR, T + '/proctor')
    open(log, 'w').close()
    sh('chown -R %d:%d %s' % (UID, UID, base))


def snapshot(path, recursive=True):
    snap = {}
    if not os.path.lexists(path):
        return snap
    if not recursive:
        for name in os.listdir(path):
            if name not in ('ws', 'out', 'trace', 'home', 'trace.log'):
                st = os.lstat(os.path.join(path, name))
                snap[name] = (st.st_mode, st.st_size, st.st_mtime_ns)
        return snap
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            p = os.path.join(root, name)
            st = os.lstat(p)
            link = os.readlink(p) if os.path.islink(p) else None
            snap[os.path.relpath(p, path)] = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_uid, link)
    st = os.lstat(path)
    snap['.'] = (st.st_mode, st.st_mtime_ns)
    return snap


def guard_files(W):
    return {d: snapshot(W + '/' + d) for d in ('.claude', '.codex', '.agents')}


def main():
    top = tempfile.mkdtemp(prefix='proctor-attacks-')
    os.chmod(top, 0o755)
    tpl = top + '/tpl'
    os.makedirs(tpl)
    template(tpl)
    rows = []
    with open(TABLE) as f:
        for line in f:
            if line.startswith('#') or not line.strip():
                continue
            cat, kind, verdict, why, effect, cmd = line.rstrip('\n').split('\t')
            if kind == 'attack':
                rows.append((cat, effect, unescape(cmd)))
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda a: run_row(top, tpl, *a), enumerate(rows)))
    failed = sum(1 for r in results if not r)
    shutil.rmtree(top, ignore_errors=True)
    print('%d attacks run, %d proven, %d not proven' % (len(rows), len(rows) - failed, failed))
    return 1 if failed else 0


def run_row(top, tpl, i, row):
    cat, effect, raw = row
    if True:
        base = '%s/r%04d' % (top, i)
        subprocess.run(['cp', '-a', tpl, base], check=True)
        # the template's paths are baked into files; fix them up for this copy
        sh("grep -rlI --exclude-dir=objects '%s' . | xargs -r sed -i 's#%s#%s#g'" % (tpl, tpl, base), cwd=base)
        sh('rm -f ws/outlink ws/danglink trace/proctor && ln -s %s/out ws/outlink && ln -s %s/out/newfile ws/danglink '
           '&& ln -s %s trace/proctor && chown -h %d:%d ws/outlink ws/danglink trace/proctor'
           % (base, base, PROCTOR, UID, UID), cwd=base)
        W, O = base + '/ws', base + '/out'
        cmd = raw.replace('@R', W).replace('@O', O)
        before = {'O': snapshot(O), 'G': guard_files(W), 'P': snapshot(base, False)}
        if effect.startswith('W:'):
            before['W'] = snapshot(W + '/' + effect[2:]) if os.path.isdir(W + '/' + effect[2:]) else (
                os.lstat(W + '/' + effect[2:]).st_mtime_ns if os.path.lexists(W + '/' + effect[2:]) else None)
        env = {'PATH': base + '/trace:/usr/local/bin:/usr/bin:/bin', 'HOME': base + '/home', 'LANG': 'C.UTF-8',
               'PYTHONPATH': base + '/pylib'}
        try:
            subprocess.run([PROCTOR, 'drop', '--uid', str(UID), '--gid', str(UID), '--clear-groups', '--keep-env-all', '--', 'bash', '-c', cmd],
                           cwd=W, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=30)
        except subprocess.TimeoutExpired:
            pass
        if effect == 'O':
            ok = snapshot(O) != before['O']
        elif effect == 'G':
            ok = guard_files(W) != before['G']
        elif effect == 'P':
            ok = snapshot(base, False) != before['P']
        elif effect.startswith('W:'):
            p = W + '/' + effect[2:]
            now = snapshot(p) if os.path.isdir(p) else (os.lstat(p).st_mtime_ns if os.path.lexists(p) else None)
            ok = now is not None and now != before['W']
        elif effect.startswith('X:'):
            with open(base + '/trace.log') as f:
                ok = effect[2:].replace('@O', O).replace('@R', W) in f.read()
        else:
            ok = False
        if not ok:
            print('not proven [%s] effect %s: %s' % (cat, effect, raw.replace('\n', '\\n')), flush=True)
        shutil.rmtree(base, ignore_errors=True)
        return ok


if __name__ == '__main__':
    sys.exit(main())
