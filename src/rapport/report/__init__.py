"""rapport.report"""
