"""OpenSpiel on the env side: `convert` turns pyspiel states into boards and back (pyspiel loaded on first use);
`game` registers our rules of any size as an OpenSpiel Python game (imports pyspiel).
"""
