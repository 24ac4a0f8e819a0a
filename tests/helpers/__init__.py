"""Helpers the tests share (not tests themselves): ``from helpers.commands import run``, ``from helpers.extras import
needs``, the slow obviously-correct references (``helpers.reference``), hypothesis strategies, browsers and wheels."""
