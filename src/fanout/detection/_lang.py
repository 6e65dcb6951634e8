"""The closed classes detection reads, for each language it covers.

English, German, French and Spanish are read word by word (``Latin``): personal
pronouns and possessives, demonstratives, articles and other determiners, the words
that introduce something new ("a", "which"), auxiliaries, the conjunctions that end
a clause, dummy pronouns ("is it safe to ...", "gibt es", "il y a"), and the nouns
that name an earlier answer ("the result"). Chinese, Japanese and Korean are read with
patterns over the same classes (``Cjk``): 他/她/它/其/该/这个…, 彼/彼女/それ/その…,
그/그녀/그것/그 …, and their ellipsis markers (上海呢？, 大阪は？, 부산은요?). Each
language also lists the instructions that make a list one task ("rank these", "the
same word", "in three parts", 排序, 並べ, 정렬) and the words that make it several
("each", 分别, それぞれ, 각각).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "CJK",
    "LATIN",
    "MATERIAL",
    "MATERIAL_COLON",
    "Cjk",
    "Latin",
    "language_of",
    "script_of",
]


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


@dataclass(frozen=True)
class Latin:
    code: str
    function: frozenset[str]
    """Closed-class words: never an antecedent, never a noun a determiner points at."""
    pronouns: dict[str, str]
    """Form -> kind: ``p`` a person, ``t`` a thing, ``x`` either, ``pl`` plural."""
    possessive: frozenset[str]
    person_wh: frozenset[str]
    """Words that ask for or stand for a person ("who", "someone")."""
    determiners: frozenset[str]
    definite: frozenset[str]
    demonstrative: frozenset[str]
    introducing: frozenset[str]
    """Determiners that introduce something new or ask for it ("a", "which")."""
    auxiliaries: frozenset[str]
    boundaries: frozenset[str]
    """Conjunctions that start a new clause."""
    expletive: re.Pattern[str]
    """Dummy pronouns that point at nothing."""
    demo_pronoun: re.Pattern[str]
    """A demonstrative that stands alone ("Is that true?")."""
    generic: frozenset[str]
    """Nouns that, after a definite determiner, name an earlier answer."""
    restrictive: frozenset[str]
    """Words after such a noun that make it self-contained ("the name of ...")."""
    ellipsis: re.Pattern[str]
    """A part that opens without a predicate of its own ("And of Argentina?")."""
    frame_whole: re.Pattern[str]
    """An instruction over the whole list: rank, compare, choose among, the same answer."""
    frame_work: re.Pattern[str]
    """An instruction to make one work from the items ("Write a story in three parts")."""
    distributive: re.Pattern[str]
    """Words that make an instruction apply to each item on its own."""

    def stem(self, word: str) -> str:
        w = word.lower()
        if self.code == "en":
            if w.endswith("ies") and len(w) > 4:
                return w[:-3] + "y"
            if w.endswith(("ches", "shes", "xes", "sses")):
                return w[:-2]
            return w[:-1] if w.endswith("s") and not w.endswith("ss") and len(w) > 3 else w
        if self.code == "de":
            for end in ("en", "er", "es", "e", "n", "s"):
                if w.endswith(end) and len(w) - len(end) >= 4:
                    return w[: -len(end)]
            return w
        if self.code == "es" and w.endswith("es") and len(w) > 4 and w[-3] not in "aeiou":
            return w[:-2]
        if self.code in ("ru", "tr"):
            return w[:5]  # case and possessive endings
        if self.code == "ar":
            return w[2:] if w.startswith("ال") and len(w) > 4 else w
        if self.code in ("it", "pt"):
            return w[:-1] if len(w) > 4 and w[-1] in "aeiouis" else w
        return w[:-1] if w.endswith(("s", "x")) and len(w) > 3 else w


_EN = Latin(
    code="en",
    function=_set(
        "a an the this that these those my your our his her its their i you we he she it they me "
        "him us them what which who whom whose when where why how is are was were be been being am "
        "do does did done have has had can could will would shall should may might must of in on at "
        "to for from with by about into over under between and or but so if then than as not no yes "
        "also too very there here any some all each every both one two three more most much many few "
        "less least other another such own same just only even still please tell give explain "
        "describe name list write make get go say said like really well now ever again s t don doesn "
        "didn isn aren wasn weren ll ve re d m up out off way kind sort lot"
    ),
    pronouns={
        **dict.fromkeys(["he", "him", "his", "himself", "she", "her", "hers", "herself"], "p"),
        **dict.fromkeys(["it", "its", "itself", "there"], "t"),
        **dict.fromkeys(["they", "them", "their", "theirs", "themselves"], "pl"),
    },
    possessive=_set("his her its their"),
    person_wh=_set("who whom whose someone somebody anyone anybody everyone everybody person"),
    determiners=_set(
        "a an the this that these those my your our some any each every one another which what "
        "two three four five several many few"
    ),
    definite=_set("the"),
    demonstrative=_set("this that these those such"),
    introducing=_set("a an one some any another which what two three four five several"),
    auxiliaries=_set(
        "do does did is are was were can could will would should shall may might has have had must"
    ),
    boundaries=_set(
        "and but or because when while if after before since although though so then whereas until once whether"
    ),
    expletive=re.compile(
        r"\b(?:is|was|would|will|does|did|can|could|isn't|wasn't)\s+it\s+(?:be\s+)?(?:\w+\s+){0,2}?"
        r"(?:to|that|if|whether|when)\b|\bit(?:'s|\s+is|\s+was|\s+will\s+be|\s+would\s+be)\s+"
        r"(?:\w+\s+){0,2}?(?:to|that|if|whether|when)\b|\b(?:does|did|will|would)\s+it\s+take\b|"
        r"\bit\s+takes?\b|\btime\s+is\s+it\b|\bhow\s+(?:far|long|late|early|cold|hot)\s+is\s+it\b|"
        r"\bit\s+(?:seems|appears|turns\s+out|rains|snows)\b|\bdoes\s+it\s+matter\b|"
        r"\bis\s+it\s+(?:true|possible|worth|ok|okay|safe|normal|legal|better|bad|wrong|rude|hard|easy)\b|"
        r"\bit(?:'s|\s+is|\s+was|\s+gets?)?\s+(?:so\s+|very\s+|always\s+)?(?:cold|hot|warm|dark|light|sunny|"
        r"rainy|windy|cloudy|humid|late|early|raining|snowing)\b|\bthere(?=\s+(?:is|are|was|were|will|would|"
        r"be|been|seems?|exists?|used|must|might|should|could|has|have|had)\b|'s)|"
        r"\b(?:is|are|was|were|will|would|be|been|isn't|aren't|wasn't|weren't)\s+there\b",
        re.IGNORECASE,
    ),
    demo_pronoun=re.compile(
        r"(?:\b(?:this|these|those)|(?:^|\b(?:is|was|does|did|do|about|of|with|for|from|to|in|use|"
        r"explain|translate|summarize|summarise|fix|rewrite|improve|make|and|or)\s+)that)\b"
        r"(?=\s*(?:[?.!,;:]|$|(?:is|was|are|were|does|did|do|mean|means|one|ones|work|works|happen|"
        r"happened|true|correct|right|wrong|again|too|also|in|into|for|as|with|from|to|on|at|by|better|"
        r"worse|more|less|so|and|or)\b))",
        re.IGNORECASE,
    ),
    generic=_set(
        "result results answer answers outcome sum total product output number numbers word words name "
        "title value figure choice pick suggestion recommendation response"
    ),
    restrictive=_set("of for"),
    ellipsis=re.compile(
        r"^\W*(?:and|or|also|what about|how about|same (?:for|with|question)|likewise|as well as)\b",
        re.IGNORECASE,
    ),
    frame_whole=re.compile(
        r"\b(?:rank|prioriti[sz]e|classify|categori[sz]e|compare|contrast)\b|"
        r"\b(?:order|sort|arrange|group|match|rate|score|grade)\s+(?:these|those|them|the following|"
        r"the (?:questions|items|list|answers)|all|both)\b|\bfrom (?:easiest|hardest|simplest|most|least|"
        r"best|worst|smallest|largest|lowest|highest|shortest|longest)\b|\bin order of\b|"
        r"\bwhich (?:one )?of (?:these|those|them|the following|the (?:questions|items|above|two|three))\b|"
        r"\bthe (?:two|three|four|five|six|\d+) (?:answers|words|results|replies|numbers|names)\b|"
        r"\b(?:choose|pick|select)\b[^.?!\n]{0,30}\b(?:one|best|easiest|hardest|among|between|of these|"
        r"of the following)\b|\b(?:the same|a single|one single|one and the same)\b[^.?!\n]{0,20}?"
        r"\b(?:word|answer|number|letter|emoji|name|phrase|sentence|response)\b|"
        r"\bone (?:word|answer|number) (?:for|that (?:answers|fits|covers)) (?:all|every|both|them)\b|"
        r"\bin (?:two|three|four|five|six|seven|eight|nine|ten|\d+) (?:parts|sections|chapters|acts|"
        r"stanzas|verses|paragraphs|scenes|episodes)\b",
        re.IGNORECASE,
    ),
    frame_work=re.compile(
        r"\b(?:write|compose|create|draft|tell|craft|produce|generate|build|design|invent)\b"
        r"(?: me| us)? (?:a|an|one|a single) (?!(?:\w+[ -]){0,2}(?:answer|reply|response|explanation|"
        r"definition|list)s?\b)",
        re.IGNORECASE,
    ),
    distributive=re.compile(
        r"\b(?:each|every|separately|individually|respectively|one by one|per question)\b",
        re.IGNORECASE,
    ),
)

_DE = Latin(
    code="de",
    function=_set(
        "der die das den dem des ein eine einen einem einer eines kein keine dieser diese dieses diesen "
        "diesem jener jene jenes mein meine dein deine unser unsere euer ich du wir ihr sie er es mich "
        "dich uns euch mir dir ihn ihm ihnen sein seine ist sind war waren wird werden wurde wurden hat "
        "haben hatte hatten kann können konnte soll sollte muss müssen darf mag möchte würde was wer wen "
        "wem wessen wie wo wann warum weshalb wieso welche welcher welches welchen welchem woher wohin "
        "wozu und oder aber denn weil wenn als ob dass doch auch noch nur schon sehr mehr viel viele "
        "nicht in im an am auf aus bei beim mit nach von vom zu zum zur für über unter vor hinter neben "
        "zwischen durch gegen ohne um bitte man nenne erkläre beschreibe gib sag schreibe hier dort da "
        "so dann jetzt heute gibt geht"
    ),
    pronouns={
        **dict.fromkeys(
            ["er", "ihn", "ihm", "sie", "sein", "seine", "seinen", "seinem", "seiner", "seines"],
            "x",
        ),
        **dict.fromkeys(["ihr", "ihre", "ihren", "ihrem", "ihrer", "ihres"], "x"),
        **dict.fromkeys(["es", "dort", "dorthin", "davon", "darüber", "darin", "daraus"], "t"),
        "ihnen": "pl",
    },
    possessive=_set("sein seine seinen seinem seiner seines ihr ihre ihren ihrem ihrer ihres"),
    person_wh=_set("wer wen wem wessen jemand jemanden jemandem person"),
    determiners=_set(
        "der die das den dem des ein eine einen einem einer eines dieser diese dieses diesen diesem "
        "jener jene jenes mein meine dein deine unser unsere welche welcher welches welchen welchem "
        "zwei drei vier einige mehrere"
    ),
    definite=_set("der die das den dem des im am zum zur vom beim ins"),
    demonstrative=_set(
        "dieser diese dieses diesen diesem jener jene jenes jenen jenem besagte besagten"
    ),
    introducing=_set(
        "ein eine einen einem einer eines welche welcher welches welchen welchem zwei drei einige mehrere"
    ),
    auxiliaries=_set(
        "ist sind war waren hat haben hatte wird werden wurde kann können soll sollte muss darf mag würde tut tun"
    ),
    boundaries=_set(
        "und aber oder weil wenn als ob dass während nachdem bevor obwohl sodass denn sondern"
    ),
    expletive=re.compile(
        r"\bgibt\s+es\b|\bes\s+gibt\b|\bwie\s+(?:spät|geht)\s+es\b|\bgeht\s+es\s+(?:um|darum)\b|"
        r"\b(?:es\s+(?:ist|war|wäre)|(?:ist|war|wäre)\s+es)\b[^.?!]{0,40}?\b(?:zu|dass|ob|wenn)\b|"
        r"\b(?:dauert|lohnt)\s+es\b|\bes\s+(?:dauert|lohnt|regnet|schneit|kommt\s+darauf\s+an)\b|"
        r"\bkommt\s+es\s+darauf\s+an\b|\b(?:(?:ist|war|wird)\s+es|es\s+(?:ist|war|wird))\b[^.?!]{0,30}?"
        r"\b(?:kalt|warm|heiß|dunkel|hell|spät|früh|windig|nass|trocken|neblig|sonnig)\b",
        re.IGNORECASE,
    ),
    demo_pronoun=re.compile(
        r"\b(?:das|dies|dieses|jenes)\b(?=\s*(?:[?.!,;:]|$|(?:ist|war|sind|bedeutet|heißt|kostet|macht|"
        r"funktioniert|stimmt|gut|schlecht|richtig|falsch|so)\b))",
        re.IGNORECASE,
    ),
    generic=_set(
        "ergebnis antwort zahl wort name titel summe wert resultat lösung vorschlag auswahl"
    ),
    restrictive=_set("von für des der"),
    ellipsis=re.compile(
        r"^\W*(?:und|oder|auch|ebenso|was ist mit|wie steht es mit|und was|dasselbe für|das gleiche für)\b",
        re.IGNORECASE,
    ),
    frame_whole=re.compile(
        r"\b(?:ordne|ordnet|ordnen|sortiere|sortiert|sortieren|reihe|bewerte|bewertet|vergleiche|"
        r"vergleicht|vergleichen|klassifiziere|gruppiere|kategorisiere)\b|"
        r"\bwelche[rs]?\s+(?:davon|der folgenden|dieser|von (?:diesen|ihnen|den folgenden))\b|"
        r"\b(?:wähle|wählt)\b[^.?!\n]{0,30}\b(?:eine[ns]?|die beste|den besten|aus|von diesen|unter)\b|"
        r"\bdie (?:zwei|drei|vier|fünf|\d+) (?:antworten|wörter|ergebnisse|zahlen|namen)\b|"
        r"\b(?:dasselbe|derselbe|dieselbe|denselben|demselben|das gleiche|die gleiche|den gleichen|"
        r"dem gleichen|dem selben|ein(?:em|en|e)? einzige[nmrs]?)\b[^.?!\n]{0,15}?"
        r"\b(?:wort|antwort|zahl|buchstaben|begriff)\b|"
        r"\bin (?:zwei|drei|vier|fünf|sechs|\d+) (?:teilen|abschnitten|kapiteln|akten|strophen|szenen)\b",
        re.IGNORECASE,
    ),
    frame_work=re.compile(
        r"\b(?:schreibe|schreib|schreibt|verfasse|erzähle|erfinde|erstelle|entwirf|dichte|gestalte)\b"
        r"(?: mir| uns)? (?:eine|einen|ein|ein einziges)\b(?![^.?!\n]{0,20}\bantwort)",
        re.IGNORECASE,
    ),
    distributive=re.compile(
        r"\b(?:jeweils|jede[nrms]?|einzeln|getrennt|separat|nacheinander)\b", re.IGNORECASE
    ),
)

_FR = Latin(
    code="fr",
    function=_set(
        "le la les l un une des du de d au aux ce cet cette ces mon ma mes ton ta tes notre nos votre "
        "vos son sa ses leur leurs je j tu il elle on nous vous ils elles me m te t se s lui eux y en "
        "qui que qu quoi quel quelle quels quelles lequel laquelle lesquels lesquelles où quand comment "
        "pourquoi combien est sont était étaient été être a ont avait avaient avoir fait faire font "
        "fut furent sera seront serait seraient peut peuvent peux pouvez doit doivent dois va vont "
        "et ou mais donc car si comme ne pas plus moins très aussi dans "
        "sur sous avec pour par sans entre vers chez c ça cela ceci"
    ),
    pronouns={
        **dict.fromkeys(["il", "elle", "lui", "son", "sa", "ses"], "x"),
        **dict.fromkeys(["ils", "elles", "eux", "leur", "leurs"], "pl"),
        **dict.fromkeys(["celui", "celle", "ceux", "celles", "cela", "ça", "ceci"], "t"),
    },
    possessive=_set("son sa ses leur leurs"),
    person_wh=_set("qui quelqu personne"),
    determiners=_set(
        "le la les l un une des du au aux ce cet cette ces mon ma mes ton ta tes notre nos votre vos "
        "son sa ses leur leurs quel quelle quels quelles chaque plusieurs deux trois quelques"
    ),
    definite=_set("le la les l du au aux"),
    demonstrative=_set("ce cet cette ces"),
    introducing=_set("un une des quel quelle quels quelles deux trois quelques plusieurs"),
    auxiliaries=_set("est sont a ont était peut doit va"),
    boundaries=_set("et mais ou car parce quand lorsque si puis alors donc pendant après avant"),
    expletive=re.compile(
        r"\bil\s+(?:y\s+a|faut|fait|s'agit|existe|reste|vaut|pleut|neige)\b|"
        r"\b(?:y\s+a|faut|fait|vaut|existe|reste|agit)-(?:t-)?il\b|\bquelle\s+heure\s+est-il\b|"
        r"\b(?:il\s+est|est-il)\s+(?:\w+\s+){0,2}?(?:de|d'|que|qu')",
        re.IGNORECASE,
    ),
    demo_pronoun=re.compile(r"(?!x)x"),
    generic=_set("résultat réponse nombre mot nom titre somme valeur choix suggestion"),
    restrictive=_set("de d du des pour"),
    ellipsis=re.compile(
        r"^\W*(?:et|ou|aussi|qu'en est-il|et pour|même chose|pareil pour|de même)\b", re.IGNORECASE
    ),
    frame_whole=re.compile(
        r"\b(?:classe|classez|ordonne|ordonnez|trie|triez|range|rangez|compare|comparez|évalue|"
        r"évaluez|regroupe|regroupez|hiérarchise)\b|"
        r"\b(?:laquelle|lequel|lesquel(?:le)?s)\s+(?:de|d')\s*(?:ces|celles|ceux|entre)|"
        r"\bchoisi(?:s|ssez)\b[^.?!\n]{0,30}\b(?:une?|l'une?|la meilleure|le meilleur|parmi)\s+"
        r"(?:de|d'|des|parmi|entre|ces|celles|ceux)|"
        r"\bles (?:deux|trois|quatre|cinq|\d+) (?:réponses|mots|résultats|nombres|noms)\b|"
        r"\b(?:le|la|les)\s+même(?:s)?\b[^.?!\n]{0,10}?\b(?:mot|réponse|nombre|lettre|terme)\b|"
        r"\b(?:un seul|une seule)\s+(?:mot|réponse|nombre|terme)\b|"
        r"\ben (?:deux|trois|quatre|cinq|six|\d+) (?:parties|sections|chapitres|actes|strophes|scènes)\b",
        re.IGNORECASE,
    ),
    frame_work=re.compile(
        r"\b(?:écris|écrivez|rédige|rédigez|compose|composez|raconte|racontez|crée|créez|invente|"
        r"inventez|imagine|imaginez)(?:-moi|-nous)? (?:un|une)\b(?![^.?!\n]{0,20}\bréponse)",
        re.IGNORECASE,
    ),
    distributive=re.compile(
        r"\b(?:chaque|chacune?|séparément|individuellement|une par une|un par un|respectivement)\b",
        re.IGNORECASE,
    ),
)

_ES = Latin(
    code="es",
    function=_set(
        "el la los las lo un una unos unas este esta estos estas ese esa esos esas aquel aquella mi mis "
        "tu tus su sus nuestro nuestra yo tú él ella usted nosotros ellos ellas ustedes me te se le les "
        "nos qué que quién quiénes cuál cuáles cuándo cuando dónde donde cómo como cuánto cuánta cuántos "
        "cuántas por para de del al a en con sin sobre entre hasta desde y e o u pero porque si no sí "
        "más menos muy también es son era eran fue fueron ser está están estaba hay ha han había tiene "
        "tienen puede pueden puedo debe hace"
    ),
    pronouns={
        **dict.fromkeys(["él", "ella", "su", "sus"], "x"),
        **dict.fromkeys(["ellos", "ellas"], "pl"),
        **dict.fromkeys(["esto", "eso", "aquello", "lo", "allí", "allá", "ahí"], "t"),
    },
    possessive=_set("su sus"),
    person_wh=_set("quién quiénes alguien persona"),
    determiners=_set(
        "el la los las un una unos unas este esta estos estas ese esa esos esas aquel aquella mi mis "
        "tu tus su sus nuestro nuestra qué cuál cada dos tres varios algunos algún alguna"
    ),
    definite=_set("el la los las del al"),
    demonstrative=_set(
        "este esta estos estas ese esa esos esas aquel aquella aquellos aquellas dicho dicha dichos dichas"
    ),
    introducing=_set("un una unos unas qué cuál cuáles algún alguna dos tres"),
    auxiliaries=_set("es son fue era está están ha han tiene puede debe"),
    boundaries=_set("y e pero o u porque cuando si mientras aunque después antes pues"),
    expletive=re.compile(r"(?!x)x"),
    demo_pronoun=re.compile(
        r"\b(?:este|esta|ese|esa|estos|estas|esos|esas)\b(?=\s*(?:[?.!,;:]|$|(?:es|fue|son|era|tiene|"
        r"cuesta|significa|funciona)\b))",
        re.IGNORECASE,
    ),
    generic=_set(
        "resultado respuesta número palabra nombre título suma valor opción elección sugerencia"
    ),
    restrictive=_set("de del para"),
    ellipsis=re.compile(
        r"^\W*(?:y|o|también|qué tal|qué hay de|lo mismo|igual para|y qué)\b", re.IGNORECASE
    ),
    frame_whole=re.compile(
        r"\b(?:ordena|ordene|ordenen|clasifica|clasifique|compara|compare|comparen|organiza|agrupa|"
        r"puntúa|califica|jerarquiza)\b|"
        r"\bcuál(?:es)?\s+de\s+(?:estas|estos|ellas|ellos|las siguientes|los siguientes)\b|"
        r"\b(?:elige|escoge|selecciona)\b[^.?!\n]{0,30}\b(?:uno|una|la mejor|el mejor|entre)\s+"
        r"(?:de|entre|estas|estos|ellas|ellos)|"
        r"\b(?:las|los) (?:dos|tres|cuatro|cinco|\d+) (?:respuestas|palabras|resultados|números|nombres)\b|"
        r"\b(?:la|el|las|los)\s+mism[ao]s?\b[^.?!\n]{0,10}?\b(?:palabra|respuesta|número|letra|término)\b|"
        r"\b(?:una sola|un solo|una única|un único)\s+(?:palabra|respuesta|número|término)\b|"
        r"\ben (?:dos|tres|cuatro|cinco|seis|\d+) (?:partes|secciones|capítulos|actos|estrofas|escenas)\b",
        re.IGNORECASE,
    ),
    frame_work=re.compile(
        r"\b(?:escribe|escriba|escríbeme|redacta|compón|crea|inventa|cuéntame|cuenta|imagina)\b"
        r"(?: me)? (?:un|una)\b(?![^.?!\n]{0,20}\brespuesta)",
        re.IGNORECASE,
    ),
    distributive=re.compile(
        r"\b(?:cada|por separado|individualmente|una por una|uno por uno|respectivamente)\b",
        re.IGNORECASE,
    ),
)

_NEVER = re.compile(r"(?!x)x")

_IT = Latin(
    code="it",
    function=_set(
        "il lo la i gli le l un uno una del dello della dei degli delle al allo alla ai agli alle dal "
        "dalla dai nel nella nei negli nelle sul sulla sui questo questa questi queste quello quella "
        "quelli quelle mio mia miei mie tuo tua nostro nostra io tu noi voi mi ti si ci vi ne che chi "
        "cosa come dove quando perché quale quali quanto quanta quanti quante di a da in con su per "
        "tra fra e ed o ma se non più meno molto anche è sono era erano fu stato stata essere ha hanno "
        "aveva avere può possono puoi devo deve fa fare c dell nell all sull dall un"
    ),
    pronouns={
        **dict.fromkeys(["lui", "lei", "suo", "sua", "suoi", "sue"], "x"),
        **dict.fromkeys(["loro"], "pl"),
        **dict.fromkeys(["esso", "essa", "ciò", "lì", "là"], "t"),
    },
    possessive=_set("suo sua suoi sue loro"),
    person_wh=_set("chi qualcuno persona"),
    determiners=_set(
        "il lo la i gli le l un uno una del dello della dei degli delle questo questa questi queste "
        "quel quello quella quei quelle mio mia tuo tua suo sua nostro nostra loro quale quali ogni "
        "due tre alcuni alcune"
    ),
    definite=_set("il lo la i gli le l del dello della dei degli delle al allo alla nel nella"),
    demonstrative=_set("questo questa questi queste quel quello quella quei quelle quegli"),
    introducing=_set("un uno una quale quali alcuni alcune due tre"),
    auxiliaries=_set("è sono era fu ha hanno può deve sta"),
    boundaries=_set("e ed ma o perché quando se mentre poi dopo prima"),
    expletive=_NEVER,
    demo_pronoun=re.compile(
        r"\b(?:questo|quello|ciò)\b(?=\s*(?:[?.!,;:]|$|(?:è|era|significa|vuol|funziona|costa)\b))",
        re.IGNORECASE,
    ),
    generic=_set("risultato risposta numero parola nome titolo somma valore scelta suggerimento"),
    restrictive=_set("di del della per"),
    ellipsis=re.compile(
        r"^\W*(?:e|o|anche|e invece|e per|lo stesso per|che mi dici di)\b", re.IGNORECASE
    ),
    frame_whole=re.compile(
        r"\b(?:ordina|classifica|confronta|paragona|raggruppa)\b|\bquale\s+(?:di\s+queste|di\s+questi|"
        r"tra)\b|\bscegli\b[^.?!\n]{0,30}\b(?:una?|la migliore|il migliore|tra)\b|"
        r"\b(?:la stessa|lo stesso) (?:parola|risposta|numero)\b|"
        r"\bin (?:due|tre|quattro|cinque|\d+) (?:parti|sezioni|capitoli|strofe)\b",
        re.IGNORECASE,
    ),
    frame_work=re.compile(
        r"\b(?:scrivi|scrivimi|componi|crea|inventa|racconta|raccontami)\b (?:un|una|uno)\b"
        r"(?![^.?!\n]{0,20}\brisposta)",
        re.IGNORECASE,
    ),
    distributive=re.compile(
        r"\b(?:ogni|ognuna|ognuno|ciascuna|ciascuno|separatamente|singolarmente|rispettivamente)\b",
        re.IGNORECASE,
    ),
)

_PT = Latin(
    code="pt",
    function=_set(
        "o a os as um uma uns umas do da dos das no na nos nas ao aos à às pelo pela este esta estes "
        "estas esse essa esses essas aquele aquela meu minha teu tua nosso nossa eu tu você vocês me te "
        "se lhe lhes que quem qual quais quando onde como quanto quanta quantos quantas porque por para "
        "de em com sem sobre entre até desde e ou mas não sim mais menos muito também é são era eram foi "
        "foram ser está estão estava há tem têm pode podem posso deve faz"
    ),
    pronouns={
        **dict.fromkeys(["ele", "ela", "dele", "dela", "seu", "sua", "seus", "suas"], "x"),
        **dict.fromkeys(["eles", "elas", "deles", "delas"], "pl"),
        **dict.fromkeys(["isso", "isto", "aquilo", "lá", "ali", "aí", "nisso", "disso"], "t"),
    },
    possessive=_set("seu sua seus suas"),
    person_wh=_set("quem alguém pessoa"),
    determiners=_set(
        "o a os as um uma uns umas este esta estes estas esse essa esses essas aquele aquela meu minha "
        "seu sua nosso nossa qual quais cada dois duas três alguns algumas"
    ),
    definite=_set("o a os as do da dos das no na nos nas ao aos pelo pela"),
    demonstrative=_set("este esta estes estas esse essa esses essas aquele aquela aqueles aquelas"),
    introducing=_set("um uma uns umas qual quais alguns algumas dois duas três"),
    auxiliaries=_set("é são foi era está estão tem pode deve"),
    boundaries=_set("e mas ou porque quando se enquanto embora depois antes pois"),
    expletive=_NEVER,
    demo_pronoun=_NEVER,
    generic=_set("resultado resposta número palavra nome título soma valor escolha sugestão"),
    restrictive=_set("de do da para"),
    ellipsis=re.compile(r"^\W*(?:e|ou|também|e quanto a|o mesmo para)\b", re.IGNORECASE),
    frame_whole=re.compile(
        r"\b(?:ordene|ordena|classifique|classifica|compare|compara|agrupe)\b|"
        r"\bqual\s+(?:destas|destes|delas|deles)\b|"
        r"\b(?:escolha|escolhe)\b[^.?!\n]{0,30}\b(?:uma?|a melhor|o melhor|entre)\b|"
        r"\b(?:a mesma|o mesmo) (?:palavra|resposta|número)\b|"
        r"\bem (?:duas|dois|três|quatro|cinco|\d+) (?:partes|seções|capítulos|estrofes)\b",
        re.IGNORECASE,
    ),
    frame_work=re.compile(
        r"\b(?:escreva|escreve|crie|cria|invente|inventa|componha|conte|redija)\b(?:-me)? (?:um|uma)\b"
        r"(?![^.?!\n]{0,20}\bresposta)",
        re.IGNORECASE,
    ),
    distributive=re.compile(
        r"\b(?:cada|separadamente|individualmente|respectivamente)\b", re.IGNORECASE
    ),
)

_TR = Latin(
    code="tr",
    function=_set(
        "bu şu o bir ve veya ile için gibi kadar daha en çok az mı mi mu mü mısın misin musun müsün "
        "mıdır midir mudur müdür ne neden niçin nasıl kim kimin kime kimi nerede nereye nereden hangi "
        "hangisi kaç nedir kimdir nerededir neresi var yok değil da de ki ama fakat çünkü eğer ise "
        "olan olarak olur oldu olmak bana beni benim sen seni senin biz bizim siz sizin lütfen zaman "
        "ayrıca peki"
    ),
    pronouns={
        **dict.fromkeys(["o", "onu", "ona", "onun", "ondan", "onda", "onunla"], "x"),
        **dict.fromkeys(["onlar", "onları", "onlara", "onların", "onlardan"], "pl"),
        **dict.fromkeys(
            [
                "bunu",
                "buna",
                "bunun",
                "bundan",
                "şunu",
                "orada",
                "oraya",
                "oradan",
                "orası",
                "orayı",
            ],
            "t",
        ),
    },
    possessive=_set("onun onların"),
    person_wh=_set("kim kimin kimi kime birisi kişi"),
    determiners=_set("bu şu o bir hangi her iki üç bazı birkaç"),
    definite=frozenset(),
    demonstrative=_set("bu şu"),
    introducing=_set("bir hangi iki üç bazı birkaç"),
    auxiliaries=frozenset(),
    boundaries=_set("ve ama veya fakat çünkü eğer ki sonra önce"),
    expletive=_NEVER,
    demo_pronoun=_NEVER,
    generic=_set("sonuç cevap yanıt sayı kelime isim ad başlık toplam değer seçim öneri"),
    restrictive=frozenset(),
    ellipsis=re.compile(r"^\W*(?:peki|ya|ve|bir de)\b", re.IGNORECASE),
    frame_whole=re.compile(
        r"\b(?:sırala|sıralayın|karşılaştır|karşılaştırın|kıyasla|sınıflandır|grupla)\b|"
        r"\baynı (?:kelime|cevap|sayı)\b|\b(?:iki|üç|dört|beş|\d+) (?:bölüm|kısım|parça)",
        re.IGNORECASE,
    ),
    frame_work=re.compile(
        r"\bbir (?:hikaye|hikâye|şiir|masal|yazı|mektup|makale)\b[^.?!\n]{0,20}\b(?:yaz|oluştur|uydur)",
        re.IGNORECASE,
    ),
    distributive=re.compile(r"\b(?:her biri|ayrı ayrı|tek tek|sırasıyla)\b", re.IGNORECASE),
)

_RU = Latin(
    code="ru",
    function=_set(
        "и в во не на с со что как а то все так но да ты к у же вы за бы по только мне было вот от "
        "меня нет о об из теперь когда даже ну ли если уже или ни быть был до вас нибудь опять уж "
        "вам ведь потом себя ничего может тут где есть надо для мы тебя чем была сам чтоб без будто "
        "чего раз тоже себе под будет ж тогда кто этот того потому совсем здесь один почти мой тем "
        "чтобы сейчас были куда зачем всех никогда можно при два другой хоть после над больше тот "
        "через нас про всего какая много разве три эту моя впрочем хорошо свою перед иногда лучше "
        "чуть том нельзя такой более всегда конечно всю между такое какие какой какое сколько "
        "почему каков какова каково каковы объясни расскажи назови напиши дай скажи пожалуйста ещё "
        "еще также самый самая самое самые"
    ),
    pronouns={
        **dict.fromkeys(
            [
                "он",
                "его",
                "него",
                "ему",
                "нему",
                "ним",
                "нём",
                "нем",
                "она",
                "её",
                "ее",
                "неё",
                "нее",
                "ей",
                "ней",
                "нею",
                "ею",
                "оно",
            ],
            "x",
        ),
        **dict.fromkeys(["они", "их", "них", "им", "ими", "ними"], "pl"),
        **dict.fromkeys(["там", "туда", "оттуда", "этого", "этому", "этим"], "t"),
    },
    possessive=_set("его её ее их"),
    person_wh=_set("кто кого кому кем ком чей чья чьё чьи человек"),
    determiners=_set(
        "этот эта это эти тот та те мой моя мое мои твой наш ваш какой какая какое какие который "
        "которая каждый два три несколько"
    ),
    definite=frozenset(),
    demonstrative=_set("этот эта эти этой этих тот та те той тех данный данная"),
    introducing=_set("какой какая какое какие который которая один одна одно два три несколько"),
    auxiliaries=_set("был была было были будет есть"),
    boundaries=_set("и а но или потому когда если пока хотя после перед чтобы"),
    expletive=_NEVER,
    demo_pronoun=re.compile(
        r"(?<![\w-])(?:это|этот|эта|эти)(?![\w-])(?=\s*(?:[?.!,;:]|$|(?:значит|означает|стоит|работает|"
        r"такое)(?![\w-])))",
        re.IGNORECASE,
    ),
    generic=_set("результат ответ число слово название имя сумма значение выбор вариант"),
    restrictive=frozenset(),
    ellipsis=re.compile(
        r"^\W*(?:а|и|или|а как насчёт|а как насчет|а что насчёт|то же самое)(?![\w-])",
        re.IGNORECASE,
    ),
    frame_whole=re.compile(
        r"(?:расставь|упорядочь|отсортируй|сравни|сравните|классифицируй|сгруппируй)|"
        r"(?:одним и тем же|одно и то же) (?:словом|слово)|(?:в|из) (?:двух|трёх|трех|четырёх|\d+) "
        r"(?:частях|частей|разделах)",
        re.IGNORECASE,
    ),
    frame_work=re.compile(
        r"(?:напиши|сочини|придумай|составь)(?: мне)? (?:рассказ|историю|стихотворение|сказку|письмо|"
        r"статью|эссе)",
        re.IGNORECASE,
    ),
    distributive=re.compile(r"(?:кажд\w+|по отдельности|отдельно|по очереди)", re.IGNORECASE),
)

_AR = Latin(
    code="ar",
    function=_set(
        "ما ماذا لماذا كيف من متى أين كم هل أي هو هي هم هما هن أنا أنت أنتم نحن في على إلى الى عن "
        "مع أو أم ثم لكن لا لم لن قد كان كانت يكون تكون هذا هذه ذلك تلك هؤلاء الذي التي الذين كل بعض "
        "غير بين عند حتى إذا اذا إن أن ان أنه هناك هنا يا شيء أكثر أقل جدا جداً أيضا أيضاً عدد اشرح "
        "اذكر اكتب أعطني قل لو سمحت فضلك يمكن يمكنك ممكن وما وكيف ومن ومتى وأين وكم وهل ولماذا وماذا "
        "تبلغ يبلغ"
    ),
    pronouns={
        **dict.fromkeys(
            [
                "هو",
                "هي",
                "فيه",
                "منه",
                "عنه",
                "له",
                "به",
                "عليه",
                "إليه",
                "معه",
                "لديه",
                "فيها",
                "منها",
                "عنها",
                "لها",
                "بها",
                "عليها",
                "إليها",
                "معها",
                "لديها",
            ],
            "x",
        ),
        **dict.fromkeys(["هم", "هما", "هن", "لهم", "بهم", "فيهم", "منهم", "عنهم", "عليهم"], "pl"),
        **dict.fromkeys(["هناك"], "t"),
    },
    possessive=frozenset(),
    person_wh=_set("من شخص أحد"),
    determiners=_set("هذا هذه ذلك تلك أي كل بعض"),
    definite=frozenset(),
    demonstrative=_set("هذا هذه ذلك تلك"),
    introducing=_set("أي بعض"),
    auxiliaries=_set("كان كانت"),
    boundaries=_set("لكن أو ثم لأن عندما إذا"),
    expletive=re.compile(
        r"(?:^|\s)و?(?:ما|من|ماذا|أين|كيف|متى)\s+(?:هو|هي|هم|هما|هن)(?=\s|$|[؟?])|(?:^|\s)هل\s+هناك"
    ),
    demo_pronoun=re.compile(r"(?:^|\s)(?:هذا|هذه|ذلك|تلك)(?=\s*(?:[؟?.!،,]|$))"),
    generic=_set("النتيجة الجواب الإجابة الرقم الكلمة الاسم العنوان المجموع القيمة"),
    restrictive=frozenset(),
    ellipsis=re.compile(
        r"^\W*(?:و(?=(?:ما|ماذا|كيف|من|متى|أين|كم|هل|لماذا|أي)(?:\s|$))|أو|ماذا عن|وماذا عن)"
    ),
    frame_whole=re.compile(r"رتب|رتّب|قارن|صنف|صنّف|نفس الكلمة|بكلمة واحدة"),
    frame_work=re.compile(r"اكتب (?:قصة|قصيدة|مقالا|مقالاً|رسالة)"),
    distributive=re.compile(r"كل (?:سؤال|واحد|واحدة)|على حدة|بشكل منفصل"),
)

_HI = Latin(
    code="hi",
    function=_set(
        "क्या क्यों कैसे कौन कौनसा कौन-सा कब कहाँ कहां कितना कितनी कितने किस किसने किसका किसकी किसके "
        "किसे है हैं था थी थे हो होता होती होते हुआ हुई हुए का की के में से को ने पर और या लेकिन भी तो "
        "ही एक मैं मेरा मेरी मेरे तुम आप हम हमारा अपना अपनी अपने कर करें करो करना करते करती जाता जाती "
        "सकता सकती सकते चाहिए कृपया बताइए बताओ बताएं समझाइए लिए साथ बहुत कुछ नहीं सबसे"
    ),
    pronouns={
        **dict.fromkeys(
            ["वह", "वो", "उसका", "उसकी", "उसके", "उसे", "उसने", "उससे", "उसमें", "उस", "उसको"], "x"
        ),
        **dict.fromkeys(["वे", "उनका", "उनकी", "उनके", "उन्हें", "उन्होंने", "उनसे", "उन"], "pl"),
        **dict.fromkeys(
            [
                "यह",
                "ये",
                "इसका",
                "इसकी",
                "इसके",
                "इसे",
                "इसमें",
                "इससे",
                "इसने",
                "इस",
                "वहाँ",
                "वहां",
                "यहाँ",
            ],
            "t",
        ),
    },
    possessive=_set("उसका उसकी उसके उनका उनकी उनके इसका इसकी इसके"),
    person_wh=_set("कौन किसने किसका किसकी किसके किसे किसको कोई व्यक्ति"),
    determiners=_set("एक कौनसा कौन-सा किस हर दो तीन कुछ"),
    definite=frozenset(),
    demonstrative=frozenset(),
    introducing=_set("एक कौनसा कौन-सा किस कौन दो तीन कुछ"),
    auxiliaries=_set("है हैं था थी थे"),
    boundaries=_set("और लेकिन या क्योंकि जब अगर तो फिर"),
    expletive=_NEVER,
    demo_pronoun=_NEVER,
    generic=_set("परिणाम उत्तर जवाब संख्या शब्द नाम शीर्षक योग"),
    restrictive=frozenset(),
    ellipsis=re.compile(r"^\W*(?:और|या|तथा)(?=\s)"),
    frame_whole=re.compile(r"क्रम में|क्रमबद्ध|तुलना|वर्गीकृत|एक ही शब्द|(?:दो|तीन|चार) भागों में"),
    frame_work=re.compile(r"(?:कहानी|कविता|निबंध|लेख|पत्र) (?:लिखिए|लिखो|लिखें)"),
    distributive=re.compile(r"प्रत्येक|हर एक|अलग-अलग|अलग अलग|एक-एक"),
)

_HIEN = Latin(
    code="hi-en",
    function=_set(
        "kya kyu kyun kyon kaise kaisa kaisi kaun kab kahan kaha kitna kitni kitne kis kisne kiska kiski "
        "kiske kisko hai hain tha thi the ho hota hoti hote hua hui hue ka ki ke me mein mai se ko ne "
        "par pe aur ya lekin bhi to toh hi ek main mera meri mere tum aap hum hamara apna apni apne kar "
        "karo karna karte karti karta jata jati sakta sakti sakte chahiye please batao bataiye bata "
        "samjhao samjhaiye liye sath saath bahut kuch nahi nahin bhai yaar bro best konsa kaunsa wala "
        "wali wale"
    )
    | _EN.function,
    pronouns={
        **dict.fromkeys(
            [
                "wo",
                "woh",
                "vo",
                "voh",
                "uska",
                "uski",
                "uske",
                "usko",
                "use",
                "usne",
                "usse",
                "usme",
                "uspe",
            ],
            "x",
        ),
        **dict.fromkeys(["unka", "unki", "unke", "unko", "unhe", "unhone", "unse"], "pl"),
        **dict.fromkeys(
            [
                "ye",
                "yeh",
                "iska",
                "iski",
                "iske",
                "isko",
                "ise",
                "isme",
                "ispe",
                "isse",
                "waha",
                "wahan",
                "vaha",
                "vahan",
            ],
            "t",
        ),
    },
    possessive=_set("uska uski uske unka unki unke iska iski iske"),
    person_wh=_set("kaun kisne kiska kiski kiske kisko koi"),
    determiners=_set("ek kaunsa konsa har do teen kuch"),
    definite=frozenset(),
    demonstrative=frozenset(),
    introducing=_set("ek kaunsa konsa kaun do teen kuch"),
    auxiliaries=_set("hai hain tha thi the"),
    boundaries=_set("aur lekin ya kyunki jab agar toh phir"),
    expletive=_NEVER,
    demo_pronoun=_NEVER,
    generic=_set("result answer jawab number word naam title"),
    restrictive=frozenset(),
    ellipsis=re.compile(r"^\W*(?:aur|ya|or|and)\b", re.IGNORECASE),
    frame_whole=re.compile(
        r"\b(?:rank|sort|compare|order)\b|\bsame (?:word|answer)\b|\bek hi (?:word|shabd|answer)\b",
        re.IGNORECASE,
    ),
    frame_work=re.compile(
        r"\b(?:story|kahani|poem|kavita|essay|letter)\b[^.?!\n]{0,20}\b(?:likho|likhiye|likh do|banao)\b",
        re.IGNORECASE,
    ),
    distributive=re.compile(r"\b(?:har ek|alag alag|alag-alag|each|separately)\b", re.IGNORECASE),
)

LATIN = {lang.code: lang for lang in (_EN, _DE, _FR, _ES, _IT, _PT, _TR, _RU, _AR, _HI, _HIEN)}
"""The languages read word by word: Latin script, and Cyrillic, Arabic and Devanagari."""

# Words that tell the Latin-script languages apart (with a few letters only some use).
_CUES = {
    "en": _set(
        "the is are what how why who which of and to does you your it this that was can with from "
        "have has my me we they he she his her its our these those would should could"
    ),
    "de": _set(
        "der die das ist und was wie warum wer welche ein eine nicht ich mit von zu den dem sind es er "
        "gibt diese dieser dieses diesen drei zwei für über auch noch nur bitte mir mich nach aus bei "
        "auf im vom zum zur sich sie wir uns"
    ),
    "fr": _set(
        "le les est et que qui quel quelle un une des du pourquoi comment ce dans pour il elle sont qu "
        "ces cette cet mon ma mes ta tes son sa ses au aux avec sur par mais où je nous vous leur leurs"
    ),
    "es": _set(
        "el los las es y qué cuál una por cómo del para con son quién dónde cuándo mi tu su ese esa "
        "este esta esto eso muy pero también está hay al lo estos estas mis tus sus nuestro sin sobre "
        "yo tú nosotros ellos ellas"
    ),
    "it": _set(
        "il gli è che di per non chi perché come cosa dove quale quali quanto della del dei delle "
        "sono ho ha uno questo questa anche ci ma più molto nel nella alla dal"
    ),
    "pt": _set(
        "o os as um uma é são do da dos das em no na não com para como qual quais quem onde você isso "
        "isto ele ela também muito está tem ao pelo pela meu minha seu sua"
    ),
    "tr": _set(
        "bir ve bu mı mu mü için ile nasıl neden kim nerede hangi kaç nedir var yok daha çok gibi "
        "olarak ama değil mısın misin ayrıca peki lütfen hangisi nedir neresi"
    ),
    "hi-en": _set(
        "kya hai hain kaise kaun kab kahan kyun kyu kyon ka ki ke mein aur bhi nahi nahin karo karna "
        "karte batao bataiye bhai yaar tha thi hota hoti kitna kitne kitni kisne konsa kaunsa wala wali "
        "chahiye mujhe mera meri"
    ),
}
_CUE_OF: dict[str, tuple[str, ...]] = {}
for _code, _words in _CUES.items():
    for _w in _words:
        _CUE_OF[_w] = (*_CUE_OF.get(_w, ()), _code)
# Letters (and elisions) only some of the languages use: each scores for all of them.
_MARK_OF = {
    **dict.fromkeys("äß", ("de",)), **dict.fromkeys("öü", ("de", "tr")), **dict.fromkeys("œîû", ("fr",)),
    **dict.fromkeys("èàù", ("fr", "it")), **dict.fromkeys("êâô", ("fr", "pt")), "ç": ("fr", "pt", "tr"),
    **dict.fromkeys("¿¡ñ", ("es",)), **dict.fromkeys("áíóú", ("es", "pt")), **dict.fromkeys("ãõ", ("pt",)),
    **dict.fromkeys("ğış", ("tr",)), **dict.fromkeys("ìò", ("it",)), "q'": ("fr",), "l'": ("fr", "it"),
    "d'": ("fr", "it"),
}  # fmt: skip
_MARKS = re.compile(r"[äöüßçèêàœùâîôû¿¡ñáíóúãõğışìò]|\b[lqd]'")


_WORD = re.compile(r"[^\W\d_]+")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_ARABIC = re.compile(r"[\u0600-\u06ff]")
_DEVANAGARI = re.compile(r"[\u0900-\u097f]")
_LATIN_LETTER = re.compile(r"[A-Za-z\u00c0-\u024f]")
_NOT_LATIN = re.compile(r"[\u0400-\u04ff\u0600-\u06ff\u0900-\u097f]")


def language_of(text: str) -> str:
    """The language a prompt not in Chinese, Japanese or Korean is read in: ``ru``,
    ``ar`` or ``hi`` when most of its letters are Cyrillic, Arabic or Devanagari, else
    ``en``, ``de``, ``fr``, ``es``, ``it``, ``pt``, ``tr`` or ``hi-en`` (Hindi in Latin
    letters) from its function words and letters (``en`` when unsure)."""
    head = text[:400]
    if not head.isascii() and _NOT_LATIN.search(head):
        latin = len(_LATIN_LETTER.findall(head))
        for script, code in ((_CYRILLIC, "ru"), (_ARABIC, "ar"), (_DEVANAGARI, "hi")):
            if len(script.findall(head)) > latin:
                return code
    lowered = head.lower()
    scores = dict.fromkeys(_CUES, 0)
    for word in set(_WORD.findall(lowered)):
        for code in _CUE_OF.get(word, ()):
            scores[code] += 1
    for mark in _MARKS.findall(lowered):
        codes = _MARK_OF.get(mark, ("fr",))
        for code in codes:
            scores[code] += 2 if len(codes) == 1 else 1
    best = max(scores, key=lambda c: (scores[c], c == "en"))
    return best if scores[best] > 0 else "en"


_HANGUL = re.compile(r"[\uac00-\ud7af]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u3400-\u9fff]")


def script_of(text: str) -> str | None:
    """``ko``, ``ja`` or ``zh`` when the text is written in that script, else None."""
    if text.isascii():
        return None
    if _HANGUL.search(text):
        return "ko"
    if _KANA.search(text):
        return "ja"
    if _HAN.search(text):
        return "zh"
    return None


@dataclass(frozen=True)
class Cjk:
    code: str
    person: re.Pattern[str]
    """Personal pronouns (and possessive forms) for people."""
    thing: re.Pattern[str]
    """Pronouns and demonstratives for things, places, earlier answers."""
    boundary: re.Pattern[str]
    person_antecedent: re.Pattern[str]
    thing_antecedent: re.Pattern[str]
    introducing: re.Pattern[str]
    ellipsis: re.Pattern[str]
    zero_subject: re.Pattern[str] | None
    """A question with nothing it is about (the subject left to the part before)."""
    frame_whole: re.Pattern[str]
    frame_work: re.Pattern[str]
    distributive: re.Pattern[str]
    all_before: re.Pattern[str]


_ZH = Cjk(
    code="zh",
    person=re.compile(
        r"(?<![其吉])(?:他们|她们|他們|她們|他|她)(?!人|国|乡|日|处|物|者)|这位|那位|此人|该人"
    ),
    thing=re.compile(
        r"它们|它們|它|(?<![尤极與与])其(?!他|它|实|次|余|间|后|前)|(?<![应不活我你他她们谁])该(?![怎如何不会是])|"
        r"(?<![因如彼由从就借])此(?![外时刻后前])|"
        r"(?:这|那|這)(?!(?:个|個)?(?:周末|星期|礼拜|月|年|学期|季节|时候|時候|次|样的话))(?<!这(?=[里裡儿兒]))"
        r"(?:个|個|本|部|首|位|座|种|種|家|条|條|只|隻|篇|句|段|款|件|道|项|項|些|样|樣|张|張|台|门|門|"
        r"场|場|份|支|棵|所|间|間|匹|颗|顆|辆|輛|名|则|則|里|裡)"
    ),
    boundary=re.compile(r"[，,；;。？?！!：:、]"),
    person_antecedent=re.compile(r"谁|誰|哪位|什么人|哪个人|一位|一名|某人|[A-Z][a-z]+"),
    thing_antecedent=re.compile(r"[\u4e00-\u9fffA-Za-z0-9]{2,}"),
    introducing=re.compile(
        r"谁|誰|哪|什么(?=[\u4e00-\u9fff])|一(?:个|個|本|部|首|位|种|種|家|座|篇|只|款|句|道|名)|推荐|选|挑|说出|举"
    ),
    ellipsis=re.compile(r"^[^，。？！\s]{1,8}呢[？?]?$|^(?:为什么|為什麼|为啥|怎么说)[？?]?$"),
    zero_subject=None,
    frame_whole=re.compile(
        r"排序|排列|排个序|排名|按.{0,8}(?:顺序|难度|難度|重要性|大小)|比较|對比|对比|分类|归类|打分|评分|"
        r"(?:以下|下面|下列|这些|上述|这几个)(?:的)?(?:问题|題|题)?(?:中|里|当中)?(?:哪个|哪一个|哪些|哪道|哪一道)|"
        r"(?:从|在)(?:以下|下面|下列|这些|上述)[^。？?\n]{0,6}(?:选|挑)|(?:这|那)?[两二三四五六七八九十几]个(?:答案|词)|"
        r"同一个|相同的|同样的(?:词|字|答案|数字)|用一个(?:词|字)(?:来)?回答(?:所有|全部|以下|下面|这些)|"
        r"分(?:为|成)?[两二三四五六七八九十\d]+(?:个)?(?:部分|段|章|幕|节)"
    ),
    frame_work=re.compile(
        r"写(?:一|1)(?:个|篇|首|段|封|则)(?!回答|答案)|编(?:一|1)(?:个|段)|创作(?:一|1)"
    ),
    distributive=re.compile(r"分别|各自|逐一|逐个|每个|每道|各个|一一"),
    all_before=re.compile(r"^(?:那)?(?:哪个|哪一个|哪一种|哪种)(?:更|最|比较)"),
)

_JA = Cjk(
    code="ja",
    person=re.compile(
        r"彼女ら|彼女|彼ら|彼(?!岸|方|此)|この人|その人|あの人|同氏|この方|その方|あの方"
    ),
    thing=re.compile(
        r"それら|それ(?!ぞれ|とも|でも)|これら|これ(?!から|まで|ほど)|そこ(?!で)|あそこ|"
        r"その(?!ため|ほか|他)|この(?!週末|夏|冬|春|秋|頃|ごろ|前|間|度|先|ように|よう)|あの(?!う)|当該"
    ),
    boundary=re.compile(r"[、。？?！!，,]"),
    person_antecedent=re.compile(r"誰|だれ|どなた|どの人|一人|ひとり|[A-Z][a-z]+"),
    thing_antecedent=re.compile(
        r"[\u4e00-\u9fff\u30a0-\u30ffA-Za-z0-9]{2,}(?:は|が|を|の|とは|も|って)"
    ),
    introducing=re.compile(r"誰|だれ|どの|どれ|何の|一つ|ひとつ|一人|一冊|挙げ|選|推薦|おすすめ"),
    ellipsis=re.compile(
        r"^[\u30a0-\u30ff\u4e00-\u9fff]{1,6}は[？?]$|^(?:なぜ|どうして|なんで)(?:ですか)?[？?]$"
    ),
    zero_subject=re.compile(
        r"(?:(?<!何)(?![何誰])[\u4e00-\u9fff\u30a0-\u30ffA-Za-z0-9]|さん|さま|くん|ちゃん)"
        r"(?:は|が|を|の|も|とは|って|に|で|へ|と|から|まで|より)"
    ),
    frame_whole=re.compile(
        r"並べ|順位|ランク付け|比べ|比較|分類|順番に|難しい順|易しい順|簡単な順|"
        r"(?:これら|次|以下|上記)の(?:質問|問題)?(?:の)?(?:うち|中で|中から)[^。？?]{0,10}(?:どれ|どの|選)|"
        r"[二三四五六2-9]つの(?:答え|単語|言葉)|"
        r"同じ(?:単語|言葉|答え|一語|数字)|一つの(?:単語|言葉)で(?:すべて|全部)|一語で(?:すべて|全部)|"
        r"[二三四五六七八九十\d]+(?:部|つのパート|パート|章|段落|幕)(?:構成|に分け|で)"
    ),
    frame_work=re.compile(
        r"(?:物語|詩|作文|エッセイ|文章|話|歌詞|手紙|記事|脚本|ストーリー)を(?:一つ|ひとつ|1つ|一編)?(?:書|作|創作)"
    ),
    distributive=re.compile(r"それぞれ|各|個別に|ひとつずつ|一つずつ"),
    all_before=re.compile(r"^(?:では|じゃあ)?(?:どちら|どっち|どれ)(?:が|の方が)"),
)

_KO = Cjk(
    code="ko",
    person=re.compile(
        r"(?<![가-힣])(?:그녀|그들|그분|그 사람|이분|그이)[가-힣]{0,3}(?![가-힣])|"
        r"(?<![가-힣])그(?:는|가|의|를|에게|에게서|한테|와|도|만)(?![가-힣])"
    ),
    thing=re.compile(
        r"(?<![가-힣])(?:그것|이것|저것|그거|이거|그게|이게|그곳|거기|그쪽)[가-힣]{0,3}(?![가-힣])|"
        r"(?<![가-힣])(?:그|해당|저)\s+(?=[가-힣A-Za-z])(?!밖|외에|다음|후|뒤|리고)|"
        r"(?<![가-힣])이\s+(?=[가-힣])(?!번|주|달|해|세상|시간|날)"
    ),
    boundary=re.compile(r"[,.?!，。？！]|(?:고|며|면서|는데|지만)(?=\s)"),
    person_antecedent=re.compile(r"누구|누가|어느 분|어떤 사람|한 명|한 사람|[A-Z][a-z]+"),
    thing_antecedent=re.compile(
        r"(?<![가-힣])(?!무엇|누구|어디|언제)[가-힣A-Za-z0-9]+(?:은|는|이|가|을|를)(?![가-힣])"
    ),
    introducing=re.compile(r"누구|어느|어떤|무슨|한 (?:명|편|권|곳|개|가지)|하나|추천|골라|고르"),
    ellipsis=re.compile(r"^\S{1,10}(?:은|는)요[?？]$|^(?:왜|어째서)요?[?？]$"),
    zero_subject=re.compile(
        r"(?<![가-힣])(?!무엇|누구|어디|언제|얼마|몇)[가-힣A-Za-z0-9]+"
        r"(?:은|는|이|가|을|를|의|도|에서|에게|에는|으로|로|와|과|이란|란)(?![가-힣])"
    ),
    frame_whole=re.compile(
        r"순서대로|순서로|순위|정렬|나열|비교|분류|등급|점수를 매|"
        r"(?:다음|이|이들|위|아래)\s?(?:질문|문제)?(?:들)?\s?중(?:에서)?\s?(?:어느|어떤|무엇|가장|하나)|"
        r"(?:하나|한 가지)(?:를|만)?\s?(?:골라|고르|선택)|(?:두|세|네|다섯) (?:답|단어|대답)|"
        r"같은 (?:단어|답|말|숫자)|동일한 (?:단어|답|말)|한 단어로 (?:모두|전부)|"
        r"(?:[두세네]|다섯|\d+)\s?(?:부분|파트|장|단락|막)(?:으로|로)"
    ),
    frame_work=re.compile(
        r"(?:이야기|시|글|에세이|편지|기사|노래|대본|소설)(?:를|을)\s?(?:하나 |한 편 )?(?:써|지어|만들어|작성)"
    ),
    distributive=re.compile(r"각각|따로|하나씩|개별적으로"),
    all_before=re.compile(r"^(?:그럼\s)?(?:어느 것|어떤 것|어느 쪽|어느 게|둘 중)"),
)

CJK = {lang.code: lang for lang in (_ZH, _JA, _KO)}

# A request that ends in a colon and works on what follows as text ("Translate into
# French: Where is the station? ..."): in any language.
MATERIAL_COLON = re.compile(
    r"^\W*(?:please\s+|pls\s+|bitte\s+|por\s+favor,?\s+)?(?:translate|rewrite|rephrase|paraphrase|"
    r"reword|proofread|correct|fix|improve|summari[sz]e|shorten|simplify|check|grade|edit|polish|"
    r"critique|review|übersetze|korrigiere|verbessere|formuliere|traduis|traduisez|corrige|"
    r"reformule|traduce|traduzca|corrige|reescribe|traduci|correggi|riscrivi|traduza|corrija|"
    r"reescreva|переведи|исправь|перепиши|перефразируй|çevir|düzelt|ترجم|صحح|अनुवाद|translate\s+karo|"
    r"翻译|翻譯|改写|润色|翻訳|번역)[^\n]{0,60}[:：]\s*$|(?:を|に)(?:翻訳|訳)して(?:ください)?[:：。]\s*$|"
    r"(?:로|으로)\s*번역해\s*(?:주세요|줘)?[:：.]?\s*$|[^\n]{0,30}(?:çevir|अनुवाद\s+करें|अनुवाद\s+कीजिए)[:：]\s*$",
    re.IGNORECASE | re.MULTILINE,
)

# An instruction that treats the items as text to work on (rewrite, translate, correct
# them): the items are material, not questions to answer.
MATERIAL = {
    "en": re.compile(
        r"\b(?:rewrite|rephrase|paraphrase|reword|translate|proofread|correct|edit|polish|shorten|improve|"
        r"make|critique|review|grade|rate|simplify|fix|reformulate)\b"
        r"[^.?!\n]{0,30}\b(?:these|those|them|the following|the questions|each|all)\b|"
        r"\b(?:write|create|make|build|turn|design|prepare|draft|generate|compose)\b[^.?!\n]{0,30}"
        r"\b(?:quiz|test|exam|faq|worksheet|survey|questionnaire|flashcards?|trivia game|interview)\b",
        re.IGNORECASE,
    ),
    "de": re.compile(
        r"\b(?:übersetze|formuliere|korrigiere|überarbeite|verbessere|kürze)\b[^.?!\n]{0,30}"
        r"\b(?:diese|die folgenden|sie|alle)\b",
        re.IGNORECASE,
    ),
    "fr": re.compile(
        r"\b(?:traduis|traduisez|reformule|reformulez|corrige|corrigez|réécris|réécrivez)\b"
        r"[^.?!\n]{0,30}\b(?:ces|les suivantes|-les|toutes)\b",
        re.IGNORECASE,
    ),
    "es": re.compile(
        r"\b(?:traduce|traduzca|reformula|corrige|reescribe|mejora)\b[^.?!\n]{0,30}"
        r"\b(?:estas|estos|las siguientes|los siguientes|todas|todos)\b",
        re.IGNORECASE,
    ),
    "zh": re.compile(
        r"(?:翻译|翻譯|改写|润色|修改|纠正|改成)[^。？?！!\n]{0,10}(?:以下|下面|这些|下列)|(?:把|将)(?:以下|下面|这些)"
    ),
    "ja": re.compile(
        r"(?:以下|次|これら)の(?:質問|文|文章)?を[^。？?\n]{0,15}(?:翻訳|書き直|言い換え|添削|直して)"
    ),
    "ko": re.compile(
        r"(?:다음|아래|이)\s?(?:질문|문장)(?:들)?을\s?[^.?!\n]{0,15}(?:번역|다시 써|고쳐|바꿔|수정)"
    ),
    "it": re.compile(
        r"\b(?:traduci|riformula|correggi|riscrivi|migliora)\b[^.?!\n]{0,30}\b(?:queste|questi|le seguenti|"
        r"tutte)\b",
        re.IGNORECASE,
    ),
    "pt": re.compile(
        r"\b(?:traduza|traduz|reformule|corrija|reescreva|melhore)\b[^.?!\n]{0,30}\b(?:estas|estes|"
        r"as seguintes|os seguintes|todas)\b",
        re.IGNORECASE,
    ),
    "tr": re.compile(
        r"(?:aşağıdaki|bu) (?:soruları|cümleleri)[^.?!\n]{0,30}(?:çevir|düzelt|yeniden yaz)"
    ),
    "ru": re.compile(
        r"(?:переведи|перефразируй|исправь|перепиши|улучши)[^.?!\n]{0,30}(?:эти|следующие|все)",
        re.IGNORECASE,
    ),
    "ar": re.compile(r"(?:ترجم|أعد صياغة|صحح|حسّن)[^.؟?!\n]{0,30}(?:هذه|التالية)"),
    "hi": re.compile(
        r"(?:इन|निम्नलिखित) (?:प्रश्नों|सवालों|वाक्यों) (?:का|को)[^।?!\n]{0,30}(?:अनुवाद|सुधार)"
    ),
    "hi-en": re.compile(
        r"\b(?:translate|rewrite|correct|improve)\b[^.?!\n]{0,30}\b(?:these|in|ye|inko)\b",
        re.IGNORECASE,
    ),
}
