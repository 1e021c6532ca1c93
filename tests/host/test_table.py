# SPDX-License-Identifier: MIT
"""The scripts' shared tables (host/ringside/table.py): aligned columns,
'-' for missing cells, notes under a column, markdown for the reports."""

import pytest

from ringside.table import Column, Table, markdown


def pktgen():
    t = Table([Column('ring', 7, left=True), Column('Mpps', 10, '%.4f'),
               Column('kicks', 6, '%d'), Column('note', gap='  ', left=True)],
              title='\npktgen')
    t.row('split', 1.23456, 3, 'ok')
    t.row('packed', None, 12)
    return t


def test_text_aligns_formats_and_marks_missing_cells():
    assert pktgen().text() == [
        '\npktgen',
        'ring          Mpps  kicks  note',
        'split       1.2346      3  ok',
        'packed           -     12  -',
    ]


def test_text_is_what_printf_columns_were():
    t = Table([Column('config', 14, left=True), Column('size', 6, '%d'),
               Column('spread', 7, '%.1f%%'), Column('range', 15)])
    t.row('default', 64, 2.5, '%7.2f-%-7.2f' % (0.5, 0.75))
    old = '%-14s %6d %6.1f%% %7.2f-%-7.2f' % ('default', 64, 2.5, 0.5, 0.75)
    assert t.text()[1] == old.rstrip()


def test_a_wide_cell_widens_its_line_only():
    t = Table([Column('a', 3, '%d'), Column('b', 3, '%d')])
    t.row(123456, 1)
    assert t.text() == ['  a   b', '123456   1']


def test_note_starts_under_its_column():
    t = Table([Column('guest', 9, left=True), Column('dir', 4), Column('P', 3)])
    t.row('ringside', 'h2g', 1)
    t.note('  each round: 1.0', under=2)
    line = t.text()[-1]
    assert line == ' ' * (9 + 1 + 4) + '  each round: 1.0'
    assert t.indent(0) == ''


def test_format_and_head_print_a_table_as_it_grows():
    t = pktgen()
    assert t.head() == t.text()[:2]
    assert t.format('split', 1.23456, 3, 'ok') == t.text()[2]
    assert t.format('split') == 'split            -      -  -'


def test_more_cells_than_columns_is_an_error():
    with pytest.raises(ValueError, match='3 cells for 2 columns'):
        Table([Column('a'), Column('b')]).row(1, 2, 3)


def test_markdown():
    assert pktgen().markdown() == [
        '| ring | Mpps | kicks | note |',
        '|---|---|---|---|',
        '| split | 1.2346 | 3 | ok |',
        '| packed | - | 12 | - |',
        '',
    ]
    assert markdown(['x', 'y'], [[1, 'a'], [2.5, None]]) == [
        '| x | y |', '|---|---|', '| 1 | a |', '| 2.5 | - |', '']
