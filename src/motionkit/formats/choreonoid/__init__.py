"""Choreonoid: body motion files (``.seq``) and body models (``.body``)."""
