"""OpenSpiel on the env side: `convert` turns pyspiel states into boards and back (pyspiel loaded on first use);
`game` registers our rules of any size as an OpenSpiel Python game (imports pyspiel); `move_order` finds an
order of moves that reaches a board (pure Python), as OpenSpiel's states are their histories.
"""
