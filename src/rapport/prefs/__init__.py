"""rapport.prefs"""
