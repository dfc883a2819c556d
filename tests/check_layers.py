#!/usr/bin/env python3
"""The house stays untied: no circle of calls between the files of the library (src/*.c) or of
the tool (src/cli/*.c), every library file calls only the files its opening comment's
"May call:" paragraph names, and only files docs/architecture.md draws after it (its layers,
top first).

A file "calls" another when it names a function or variable that the other defines at file
scope without `static` (comments and string literals are left out). Usage:
    check_layers.py SOURCE_ROOT
Exit 0 when the house holds, 1 with one line per fault otherwise."""
import pathlib
import re
import sys

DEF_FUNC = re.compile(r'^(?!static\b|typedef\b|struct\b|enum\b|extern\b)[A-Za-z_][\w \t\*]*?\b(\w+)\s*\(')
DEF_VAR = re.compile(r'^(?!static\b|typedef\b|extern\b)(?:const\s+)?[A-Za-z_][\w \t\*]*?\b(\w+)\s*(?:\[[^\]]*\])?\s*=')
WORD = re.compile(r'\b[A-Za-z_]\w*\b')


def strip(text):
    """The text without comments, string and character literals (kept as blanks)."""
    text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.S)
    text = re.sub(r'//[^\n]*', '', text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(\\.|[^'\\\n])*'", "''", text)


def definitions(path, code):
    """Names defined at file scope without static: functions (a body follows) and variables."""
    names = set()
    lines = code.split('\n')
    for i, line in enumerate(lines):
        m = DEF_FUNC.match(line)
        if m and not line.rstrip().endswith(';'):
            # a definition when its header reaches '{' before any ';'
            rest = '\n'.join(lines[i:i + 8])
            brace, semi = rest.find('{'), rest.find(';')
            if brace >= 0 and (semi < 0 or brace < semi):
                names.add(m.group(1))
            continue
        m = DEF_VAR.match(line)
        if m:
            names.add(m.group(1))
    return names


def uses(files):
    """file -> the other files of the group whose definitions it names."""
    codes = {f: strip(f.read_text()) for f in files}
    owner = {}
    for f, code in codes.items():
        for name in definitions(f, code):
            owner.setdefault(name, set()).add(f)
    graph = {}
    for f, code in codes.items():
        graph[f] = {g for w in set(WORD.findall(code)) for g in owner.get(w, ()) if g != f}
    return graph


def circles(graph):
    """Every file that lies on a cycle, with one cycle through it (Tarjan's components)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def may_call(path):
    """The files a library file's opening comment allows it to call, or None without the line."""
    head = path.read_text().split('*/', 1)[0]
    m = re.search(r'May call:(.*?)(?:\n \*\s*\n|\Z)', head, flags=re.S)
    if not m:
        return None
    return set(re.findall(r'\b([a-z_0-9]+\.c)\b', m.group(1)))


def drawn_order(root):
    """The library files in the order docs/architecture.md draws its layers (top first), or
    None without the drawing."""
    doc = root / 'docs' / 'architecture.md'
    if not doc.exists():
        return None
    text = doc.read_text()
    start = text.find('```', text.find('## The layers'))
    end = text.find('```', start + 3)
    block = text[start + 3:end].split('-' * 20, 1)[-1]  # below the programs' line
    order = []
    for name in re.findall(r'\b([a-z_0-9]+\.c)\b', block):
        if name not in order:
            order.append(name)
    return order


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else '.')
    faults = []
    lib = sorted((root / 'src').glob('*.c'))
    cli = sorted((root / 'src' / 'cli').glob('*.c'))
    for name, files in (('library', lib), ('tool', cli)):
        if not files:
            faults.append(f'{name}: no C files under {root}')
            continue
        graph = uses(files)
        for comp in circles(graph):
            ties = '; '.join(f'{a.name} -> {b.name}' for a in comp for b in sorted(graph[a])
                             if b in comp)
            faults.append(f'{name}: a circle of calls between {", ".join(f.name for f in comp)} '
                          f'({ties})')
        if name != 'library':
            continue
        order = drawn_order(root)
        if order is None:
            faults.append('docs/architecture.md: no drawing of the layers')
            order = []
        for f in files:
            if f.name not in order:
                faults.append(f'{f.relative_to(root)}: not drawn in docs/architecture.md')
                continue
            for g in sorted(graph[f]):
                if g.name in order and order.index(g.name) < order.index(f.name):
                    faults.append(f'{f.relative_to(root)} calls {g.name}, which '
                                  f'docs/architecture.md draws above it')
        for f in files:
            allowed = may_call(f)
            if allowed is None:
                faults.append(f'{f.relative_to(root)}: no "May call:" line in its opening comment')
                continue
            for g in sorted(graph[f]):
                if g.name not in allowed:
                    faults.append(f'{f.relative_to(root)} calls {g.name}, which its "May call:" '
                                  f'line does not name')
    for line in faults:
        print(line)
    if not faults:
        print(f'layers: {len(lib)} library files and {len(cli)} tool files, no circle; every '
              f'library file calls only what it says it may')
    return 1 if faults else 0


if __name__ == '__main__':
    sys.exit(main())
