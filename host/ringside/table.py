# SPDX-License-Identifier: MIT
"""The scripts' tables, one way for all: columns with a header, a width,
an alignment and a %-format; rows of cells, None printed as '-'. text()
aligns them for the terminal, markdown() writes them for the .md
reports.

    t = Table([Column('ring', 7, left=True), Column('Mpps', 10, '%.4f')],
              title='pktgen, Mpps')
    t.row('split', 1.25)
    t.print()
"""

MISSING = '-'


class Column:
    """One column: `fmt` is applied to a cell that is not a string (a
    string is taken as it is), then the cell and the header are padded
    to `width`, on the right when `left`; `gap` goes before the column."""

    def __init__(self, head, width=0, fmt=None, left=False, gap=' '):
        self.head, self.width, self.fmt, self.left, self.gap = head, width, fmt, left, gap

    def text(self, cell):
        if cell is None:
            cell = MISSING
        elif not isinstance(cell, str):
            cell = self.fmt % cell if self.fmt else str(cell)
        return cell

    def pad(self, text):
        return text.ljust(self.width) if self.left else text.rjust(self.width)


class Table:
    """Rows under columns; a note is a line of its own, indented to start
    under the column numbered `under`."""

    def __init__(self, columns, title=None):
        self.columns, self.title, self.rows = list(columns), title, []

    def row(self, *cells):
        self.rows.append(self._cells(cells))

    def note(self, text, under=0):
        self.rows.append(self.indent(under) + text)

    def indent(self, under):
        """Blanks as wide as the columns before the one numbered `under`."""
        width = sum(len(c.gap) + c.width for c in self.columns[:under])
        return ' ' * (width - len(self.columns[0].gap) if under else 0)

    def _line(self, texts):
        line = ''.join(c.gap + c.pad(t) for c, t in zip(self.columns, texts))
        return line[len(self.columns[0].gap):].rstrip()

    def head(self):
        """The title and the header line, for a table printed as it grows."""
        return ([] if self.title is None else [self.title]) + [
            self._line([c.head for c in self.columns])]

    def _cells(self, cells):
        if len(cells) > len(self.columns):
            raise ValueError('%d cells for %d columns' % (len(cells), len(self.columns)))
        return tuple(cells) + (None,) * (len(self.columns) - len(cells))

    def format(self, *cells):
        """One row as its aligned line; cells left out are missing."""
        return self._line([c.text(v) for c, v in zip(self.columns, self._cells(cells))])

    def text(self):
        """The title, the header and the rows as aligned lines."""
        return self.head() + [r if isinstance(r, str) else self.format(*r) for r in self.rows]

    def markdown(self):
        """The header and the rows as a markdown table (notes left out),
        with a blank line after it."""
        out = ['| ' + ' | '.join(c.head for c in self.columns) + ' |',
               '|' + '---|' * len(self.columns)]
        out += ['| ' + ' | '.join(c.text(v) for c, v in zip(self.columns, r)) + ' |'
                for r in self.rows if not isinstance(r, str)]
        return out + ['']

    def print(self):
        print('\n'.join(self.text()))


def markdown(head, rows):
    """A markdown table of rows of cells under the headers `head`."""
    t = Table(Column(h) for h in head)
    for r in rows:
        t.row(*r)
    return t.markdown()
