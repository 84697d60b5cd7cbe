"""Writes questions.txt, the small word-analogy test of `glue vectors eval`
(word2vec's questions-words.txt format: ": category", then "a b c d" lines
meaning a : b :: c : d), from the word lists below: every ordered pair of two
different entries of a list is one question, in list order. Lower-case, as the
vectors. Categories as word2vec's capital-common-countries, capital-world and
gram8-plural; the lists are written here (common words, so a small corpus
has them). usage: python3 make_analogies.py > questions.txt"""

# capital, country: national capitals (capital-common-countries / capital-world)
CAPITALS = [
    ("athens", "greece"), ("berlin", "germany"), ("cairo", "egypt"), ("dublin", "ireland"),
    ("london", "england"), ("madrid", "spain"), ("moscow", "russia"), ("oslo", "norway"),
    ("ottawa", "canada"), ("paris", "france"), ("rome", "italy"), ("stockholm", "sweden"),
    ("tokyo", "japan"), ("vienna", "austria"), ("warsaw", "poland"), ("lisbon", "portugal"),
    ("beijing", "china"), ("canberra", "australia"),
]

# singular, plural: regular and irregular nouns (gram8-plural)
PLURALS = [
    ("car", "cars"), ("child", "children"), ("city", "cities"), ("country", "countries"),
    ("day", "days"), ("dog", "dogs"), ("eye", "eyes"), ("family", "families"),
    ("hand", "hands"), ("house", "houses"), ("man", "men"), ("woman", "women"),
    ("year", "years"), ("book", "books"), ("song", "songs"), ("game", "games"),
    ("king", "kings"), ("film", "films"),
]


def category(name, pairs):
    print(": " + name)
    for a, b in pairs:
        for c, d in pairs:
            if a != c:
                print(a, b, c, d)


category("capital-country", CAPITALS)
category("plural-nouns", PLURALS)
