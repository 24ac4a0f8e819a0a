"""Helpers the tests share (not tests themselves): ``from helpers.commands import run``."""
