#!/usr/bin/env python3
"""Checks of the user documentation (README.md, docs/).

    user_docs.py issues [--exclude DIR]... PATH...
        Every line of the Markdown files named that names an issue number ("issue 29",
        "issues 16 and 20", "Issue #23", "(issue 17)") is printed as FILE:LINE; exit 1 when
        there is one, 0 when there is none. A directory stands for its *.md files and those
        of its immediate subdirectories, less those under an --exclude'd directory
        (docs/results keeps the lab's records, issue numbers and all).

    user_docs.py summary FILE
        The summary table of a performance page: the first Markdown table after the page's
        title. Its header must have the columns figure, anchor, platform, date and command
        (a header cell names its column by its first word), and every row a figure, an
        anchor, a platform, a date (YYYY-MM-DD) and a command in backticks. Each row that
        lacks one is printed as FILE:LINE with the row's name (its first cell) and the
        cell; exit 1 when there is one, 0 otherwise.

Usage errors (no or unknown command, a missing file) exit 2.
"""
import os
import re
import sys

USAGE = ("usage: user_docs.py issues [--exclude DIR]... PATH...\n"
         "       user_docs.py summary FILE")

# "issue 29", "issues 16 and 20", "Issue #23", "issue: 7", "issue no. 4": the word, then a
# number, or a '#NN', close after it.
ISSUE = re.compile(r"\bissues?\b[\s:.,-]*(?:no\.?\s*)?#?\s*[0-9]+", re.IGNORECASE)

COLUMNS = ("figure", "anchor", "platform", "date", "command")
DATE = re.compile(r"\b[0-9]{4}-[0-9]{2}-[0-9]{2}\b")
CODE = re.compile(r"`[^`]+`")


def usage(message):
    print(f"user_docs.py: {message}\n{USAGE}", file=sys.stderr)
    sys.exit(2)


def read_lines(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().split("\n")
    except (OSError, UnicodeDecodeError) as e:
        usage(f"cannot read {path}: {e}")


def markdown_files(paths, excluded):
    excluded = [os.path.realpath(d) for d in excluded]

    def kept(path):
        real = os.path.realpath(path)
        return not any(real == d or real.startswith(d + os.sep) for d in excluded)

    files = []
    for path in paths:
        if os.path.isdir(path):
            dirs = [path] + sorted(os.path.join(path, d) for d in os.listdir(path)
                                   if os.path.isdir(os.path.join(path, d)))
            for d in dirs:
                if kept(d):
                    files += sorted(os.path.join(d, f) for f in os.listdir(d)
                                    if f.endswith(".md") and os.path.isfile(os.path.join(d, f)))
        elif os.path.isfile(path):
            files.append(path)
        else:
            usage(f"no such file or directory: {path}")
    return files


def check_issues(args):
    excluded, paths = [], []
    i = 0
    while i < len(args):
        if args[i] == "--exclude":
            if i + 1 == len(args):
                usage("--exclude without a directory")
            excluded.append(args[i + 1])
            i += 2
        elif args[i].startswith("--exclude="):
            excluded.append(args[i].split("=", 1)[1])
            i += 1
        elif args[i].startswith("-") and args[i] != "-":
            usage(f"unknown option {args[i]}")
        else:
            paths.append(args[i])
            i += 1
    if not paths:
        usage("issues needs at least one file or directory")
    files = markdown_files(paths, excluded)
    found = 0
    for path in files:
        for number, line in enumerate(read_lines(path), 1):
            for match in ISSUE.finditer(line):
                print(f"{path}:{number}: names an issue number: {match.group(0)}")
                found += 1
    if found:
        print(f"user_docs issues: {found} issue numbers in {len(files)} files; say what holds now "
              "instead (the issue's history belongs in CHANGES.md or docs/results)")
        return 1
    print(f"user_docs issues: {len(files)} files, none names an issue number")
    return 0


def cells(line):
    """The cells of a table row, split at the pipes that are not escaped."""
    row = line.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|") and not row.endswith("\\|"):
        row = row[:-1]
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", row)]


def is_separator(line):
    parts = cells(line)
    return bool(parts) and all(re.fullmatch(r":?-{3,}:?", p) for p in parts)


def check_summary(args):
    if len(args) != 1:
        usage("summary takes one file")
    path = args[0]
    if not os.path.isfile(path):
        usage(f"no such file: {path}")
    lines = read_lines(path)
    title = next((n for n, line in enumerate(lines) if re.match(r"#\s+\S", line)), None)
    if title is None:
        print(f"{path}: no page title (a '# ' heading)")
        return 1
    start = next((n for n in range(title + 1, len(lines) - 1)
                  if lines[n].lstrip().startswith("|") and is_separator(lines[n + 1])), None)
    if start is None:
        print(f"{path}: no table after the page title")
        return 1
    header = [c.lower() for c in cells(lines[start])]
    index = {}
    for column in COLUMNS:
        where = [i for i, c in enumerate(header) if re.match(rf"{column}\b", c)]
        if not where:
            print(f"{path}:{start + 1}: the summary table has no '{column}' column")
        else:
            index[column] = where[0]
    if len(index) != len(COLUMNS):
        return 1
    faults, rows = 0, 0
    n = start + 2
    while n < len(lines) and lines[n].lstrip().startswith("|"):
        row = cells(lines[n])
        row += [""] * (len(header) - len(row))
        name = row[0] or f"row {rows + 1}"
        rows += 1
        for column in COLUMNS:
            value = row[index[column]]
            problem = None
            if not value:
                problem = f"no {column}"
            elif column == "date" and not DATE.search(value):
                problem = f"no date (YYYY-MM-DD) in '{value}'"
            elif column == "command" and not CODE.search(value):
                problem = f"no command in backticks in '{value}'"
            if problem:
                print(f"{path}:{n + 1}: row '{name}': {problem}")
                faults += 1
        n += 1
    if rows == 0:
        print(f"{path}:{start + 1}: the summary table has no rows")
        return 1
    if faults:
        print(f"user_docs summary: {path}: {faults} missing cells in {rows} rows")
        return 1
    print(f"user_docs summary: {path}: {rows} rows, each with a figure, an anchor, a platform, "
          "a date and a command")
    return 0


def main(argv):
    if len(argv) < 2:
        usage("no command")
    if argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    if argv[1] == "issues":
        return check_issues(argv[2:])
    if argv[1] == "summary":
        return check_summary(argv[2:])
    usage(f"unknown command {argv[1]}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
